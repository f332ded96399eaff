/**
 * `image_generate` of one process: on the configured images endpoint (or saying how to configure one),
 * saving images in the session's workspace through `WorkspaceAccess` (where its commands run, the
 * quota applied) and a copy under `HERALD_HOME/cache/outgoing/` that the outbox sends.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { ownerOf, type WorkspaceAccess } from "../../exec/index.js";
import type { UnavailableToolset } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";
import type { ImagesEndpoint } from "./client.js";
import type { SavedImage } from "./declaration.js";
import { imageGenerateTool } from "./declaration.js";
import { IMAGES_NOT_CONFIGURED } from "./settings.js";

/** The settings `image_generate` reads (`HeraldConfig` has this shape). */
export interface ImageSettings {
  images?: (ImagesEndpoint & { maxImages?: number | undefined }) | undefined;
  web: { allowPrivate: boolean };
  homeDir: string;
}

/** `image_generate` on the workspaces of `access`; without an images endpoint it is listed unavailable. */
export function createImageTool(
  config: ImageSettings,
  ports: { access: WorkspaceAccess; unavailable: UnavailableToolset[] },
): Tool {
  if (!config.images)
    ports.unavailable.push({
      toolset: "image",
      missing: "image_generate: no images endpoint",
      fix: IMAGES_NOT_CONFIGURED,
    });
  return imageGenerateTool({
    endpoint: config.images,
    maxImages: config.images?.maxImages,
    allowPrivate: config.web.allowPrivate,
    save: workspaceSaver(ports.access, join(config.homeDir, "cache")),
  });
}

/**
 * Writes an image into the session's workspace (through the backend) and the same bytes into a folder
 * of its own under `cacheDir/outgoing/`, which the outbox sends (the cache's housekeeping removes it
 * once delivered and old).
 */
export function workspaceSaver(
  access: WorkspaceAccess,
  cacheDir: string,
): (rel: string, bytes: Uint8Array, ctx: ToolContext) => Promise<SavedImage> {
  return async (path, bytes, ctx) => {
    const open = await access.open(ownerOf(ctx.origin), ctx.signal);
    const rel = open.resolve(path);
    await open.files.write(rel, bytes);
    const outgoing = join(cacheDir, "outgoing");
    await mkdir(outgoing, { recursive: true, mode: 0o700 });
    const dir = await mkdtemp(join(outgoing, "image-"));
    const copy = join(dir, posix.basename(rel));
    await writeFile(copy, bytes, { mode: 0o600, flag: "wx" });
    return { shown: open.shown(rel), outgoing: copy };
  };
}
