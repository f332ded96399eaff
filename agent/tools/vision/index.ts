/**
 * `vision_analyze` (toolset "vision"): asks an auxiliary vision model about an image in the workspace
 * (an attachment the user sent, a file a command made) or at a URL, and returns its answer. URLs are
 * fetched through the guarded fetch (SSRF checks, size and time caps); the image goes to the model as
 * a `data:` URL. Without a `vision` section the tool says how to configure one.
 */
export { askVision, type VisionEndpoint } from "./client.js";
export type { VisionToolDeps } from "./declaration.js";
export { visionTool } from "./declaration.js";
export { VISION_NOT_CONFIGURED } from "./settings.js";
export { createVisionTool, type VisionSettings, workspaceReader } from "./setup.js";
