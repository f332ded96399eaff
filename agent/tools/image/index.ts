/**
 * `image_generate` (toolset "image"): pictures on request from an OpenAI-compatible
 * `/images/generations` endpoint (`images:` settings). Each image is saved in the session's workspace
 * (`images/`, written through the execution backend, so the sandboxed commands see it) and sent to the
 * chat with the reply through the outbox: a photo on Telegram, an upload on Discord and Slack, a file
 * elsewhere. The provider's token counts are added to the turn's usage under `images/<model>`, so
 * `/usage` lists them (with a cost when `providers:` has a provider named `images` declaring
 * that model's price). Without a section the tool says
 * how to configure one.
 */
export type { GeneratedImage, Generation, ImagesEndpoint } from "./client.js";
export type { ImageToolDeps } from "./declaration.js";
export { imageGenerateTool } from "./declaration.js";
export { IMAGES_NOT_CONFIGURED } from "./settings.js";
export { createImageTool, type ImageSettings, workspaceSaver } from "./setup.js";
