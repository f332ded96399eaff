/**
 * `vision_analyze` of one process: on the configured vision model (or saying how to configure one),
 * reading images in the session's workspace through `WorkspaceAccess` (where the commands run), never
 * a path on the gateway's own disk.
 */
import { HeraldError } from "../../../core/errors.js";
import { ownerOf, type WorkspaceAccess } from "../../exec/index.js";
import type { UnavailableToolset } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";
import type { VisionEndpoint } from "./client.js";
import { visionTool } from "./declaration.js";
import { VISION_NOT_CONFIGURED } from "./settings.js";

/** The settings `vision_analyze` reads (`HeraldConfig` has this shape). */
export interface VisionSettings {
  vision?: VisionEndpoint | undefined;
  web: { allowPrivate: boolean };
}

/** `vision_analyze` on the workspaces of `access`; without a vision model it is listed unavailable. */
export function createVisionTool(
  config: VisionSettings,
  ports: { access: WorkspaceAccess; unavailable: UnavailableToolset[] },
): Tool {
  if (!config.vision)
    ports.unavailable.push({
      toolset: "vision",
      missing: "vision_analyze: no vision model",
      fix: VISION_NOT_CONFIGURED,
    });
  return visionTool({
    endpoint: config.vision,
    readWorkspaceFile: workspaceReader(ports.access),
    allowPrivate: config.web.allowPrivate,
  });
}

/** Reads a workspace file of at most `maxBytes` for `vision_analyze`. */
export function workspaceReader(
  access: WorkspaceAccess,
): (path: string, ctx: ToolContext, maxBytes: number) => Promise<Uint8Array> {
  return async (path, ctx, maxBytes) => {
    const open = await access.open(ownerOf(ctx.origin), ctx.signal);
    const rel = open.resolve(path);
    const info = await open.files.stat(rel);
    if (info?.kind !== "file")
      throw new HeraldError(`${path} does not exist in the workspace`, { code: "not_found" });
    if (info.sizeBytes > maxBytes)
      throw new HeraldError(
        `${path} is ${info.sizeBytes} bytes, over the ${maxBytes}-byte limit for images`,
        {
          code: "invalid_input",
        },
      );
    const bytes = await open.files.read(rel, { offset: 0, length: maxBytes + 1 });
    if (bytes.byteLength > maxBytes)
      throw new HeraldError(`${path} is over the ${maxBytes}-byte limit for images`, {
        code: "invalid_input",
      });
    return bytes;
  };
}
