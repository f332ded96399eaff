/**
 * `vision_analyze` (toolset "vision"): asks an auxiliary vision model about an image in the workspace
 * (an attachment the user sent, a file a command made) or at a URL, and returns its answer. URLs are
 * fetched through the guarded fetch (SSRF checks, size and time caps); the image goes to the model as
 * a `data:` URL. Without a `vision` section the tool says how to configure one.
 */
import { extname } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import type { ToolExecute } from "../../tool-declaration.js";
import type { ToolContext } from "../../types.js";
import { imageTypeOf, safeFetch } from "../web/safe-fetch.js";
import { askVision } from "./client.js";
import type { VisionToolDeps, visionAnalyzeParameters } from "./declaration.js";
import { VISION_NOT_CONFIGURED } from "./settings.js";

const IMAGE_TYPES = {
  accepts: (mime: string) => mime.startsWith("image/"),
  accept: "image/png,image/jpeg,image/webp,image/gif;q=0.9,image/*;q=0.8",
  what: "vision_analyze reads images",
};

const BY_EXTENSION: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".gif": "image/gif",
};

/** What `vision_analyze` does (`declaration.ts` declares it), bound to `deps`, by name. */
export function visionToolRuns(deps: VisionToolDeps) {
  const maxBytes = deps.maxImageBytes ?? 10 * 1024 * 1024;
  const visionAnalyze: ToolExecute<typeof visionAnalyzeParameters> = async (args, ctx) => {
    if (!deps.endpoint) return { content: `error: ${VISION_NOT_CONFIGURED}.`, isError: true };
    const image = /^https?:\/\//i.test(args.image)
      ? await fromUrl(args.image, deps, maxBytes, ctx.signal)
      : await fromPath(args.image, deps, maxBytes, ctx);
    const answer = await askVision(deps.endpoint, image, args.question, ctx.signal);
    return `What the vision model sees in ${args.image}:\n${answer}`;
  };
  return { vision_analyze: visionAnalyze };
}

async function fromUrl(
  url: string,
  deps: VisionToolDeps,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; mime: string }> {
  const res = await safeFetch(url, { signal, maxBytes, allowPrivate: deps.allowPrivate, types: IMAGE_TYPES });
  if (res.status >= 400)
    throw new HeraldError(`${url} answered HTTP ${res.status}; no image to look at`, { code: "not_found" });
  return { bytes: res.bytes, mime: res.contentType };
}

async function fromPath(
  path: string,
  deps: VisionToolDeps,
  maxBytes: number,
  ctx: ToolContext,
): Promise<{ bytes: Uint8Array; mime: string }> {
  if (!deps.readWorkspaceFile)
    throw new HeraldError("there is no workspace here to read files from: give the image's http(s) URL", {
      code: "invalid_input",
    });
  const bytes = await deps.readWorkspaceFile(path, ctx, maxBytes);
  const mime = imageTypeOf(bytes) ?? BY_EXTENSION[extname(path).toLowerCase()];
  if (!mime)
    throw new HeraldError(`${path} is not an image (PNG, JPEG, WebP or GIF)`, { code: "invalid_input" });
  return { bytes, mime };
}
