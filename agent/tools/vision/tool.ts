/**
 * `vision_analyze` (toolset "vision"): asks an auxiliary vision model about an image in the workspace
 * (an attachment the user sent, a file a command made) or at a URL, and returns its answer. URLs are
 * fetched through the guarded fetch (SSRF checks, size and time caps); the image goes to the model as
 * a `data:` URL. Without a `vision` section the tool says how to configure one.
 */
import { extname } from "node:path";
import { z } from "zod";
import { HeraldError } from "../../../core/errors.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";
import { imageTypeOf, safeFetch } from "../web/safe-fetch.js";
import type { AllowPrivate } from "../web/types.js";
import { askVision, type VisionEndpoint } from "./client.js";

/** What `vision_analyze` runs with. */
export interface VisionToolDeps {
  /** The vision model; undefined when `vision` is not configured (the tool then says how to). */
  endpoint: VisionEndpoint | undefined;
  /**
   * Reads a file of the session's workspace (where its commands run), at most `maxBytes`; throws a
   * HeraldError saying why not (missing, too large, outside the workspace). Undefined where there are
   * no workspaces: only URLs are read.
   */
  readWorkspaceFile?: ((path: string, ctx: ToolContext, maxBytes: number) => Promise<Uint8Array>) | undefined;
  /** Let URL fetches reach private addresses (the owner's choice). @defaultValue false */
  allowPrivate?: AllowPrivate | undefined;
  /** Largest image sent. @defaultValue 10 MiB */
  maxImageBytes?: number | undefined;
}

/** Why the tool is off, and the fix; also what doctor prints. */
export const VISION_NOT_CONFIGURED =
  "vision_analyze needs a vision model: configure vision: in config.yaml (base_url, model, api_key) or set HERALD_VISION_URL, HERALD_VISION_MODEL and HERALD_VISION_KEY";

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

/** `vision_analyze`, bound to `deps`. */
export function visionTool(deps: VisionToolDeps): Tool {
  const maxBytes = deps.maxImageBytes ?? 10 * 1024 * 1024;
  return defineTool({
    name: "vision_analyze",
    description:
      "Look at an image and answer a question about it (describe it, read its text, find something in it).",
    parameters: z.object({
      image: z
        .string()
        .min(1)
        .describe("A workspace path (e.g. an attachment the user sent) or an http(s) URL."),
      question: z.string().min(1).max(4000).describe("What to find out, e.g. 'What does the sign say?'"),
    }),
    toolset: "vision",
    label: (args) => `👁️ ${args.image}`,
    async execute(args, ctx) {
      if (!deps.endpoint) return { content: `error: ${VISION_NOT_CONFIGURED}.`, isError: true };
      const image = /^https?:\/\//i.test(args.image)
        ? await fromUrl(args.image, deps, maxBytes, ctx.signal)
        : await fromPath(args.image, deps, maxBytes, ctx);
      const answer = await askVision(deps.endpoint, image, args.question, ctx.signal);
      return `What the vision model sees in ${args.image}:\n${answer}`;
    },
  });
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
