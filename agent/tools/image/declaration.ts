/**
 * The `image_generate` tool's declaration; its implementation (`tool.ts`) loads on its first call.
 */

import { z } from "zod";
import { declareTool, runsFrom } from "../../tool-declaration.js";
import type { Tool, ToolContext } from "../../types.js";
import type { AllowPrivate } from "../web/types.js";
import type { ImagesEndpoint } from "./client.js";
import { IMAGE_SIZE } from "./settings.js";

/** Where a saved image is: as the model sees it in the workspace, and the copy the outbox sends. */
export interface SavedImage {
  shown: string;
  outgoing: string;
}

/** What `image_generate` runs with. */
export interface ImageToolDeps {
  /** The images endpoint; undefined when `images` is not configured (the tool then says how to). */
  endpoint: ImagesEndpoint | undefined;
  /** Most images one call may ask for. @defaultValue 4 */
  maxImages?: number | undefined;
  /**
   * Saves an image as `rel` (a workspace-relative path) in the session's workspace and as a copy the
   * outbox sends; throws a HeraldError saying why not (quota, backend).
   */
  save: (rel: string, bytes: Uint8Array, ctx: ToolContext) => Promise<SavedImage>;
  /** Let image URLs the provider answers reach private addresses. @defaultValue false */
  allowPrivate?: AllowPrivate | undefined;
}

/** `image_generate`'s arguments, with the most images one call may ask for. */
export function imageGenerateParameters(maxImages: number) {
  return z.object({
    prompt: z.string().min(1).max(4000).describe("What the picture shows: subject, style, composition."),
    size: z
      .string()
      .regex(IMAGE_SIZE, "a size such as 1024x1024, 1536x1024, 1024x1536 or auto")
      .optional()
      .describe("WIDTHxHEIGHT, e.g. 1024x1024 (default: the configured size)."),
    n: z.number().int().min(1).max(maxImages).optional().describe(`How many images (1-${maxImages}).`),
  });
}

/** The type of {@link imageGenerateParameters}' schema. */
export type ImageGenerateParameters = ReturnType<typeof imageGenerateParameters>;

const imageRuns = runsFrom(() => import("./tool.js"), "imageGenerateToolRuns");

/** `image_generate`, bound to `deps`. */
export function imageGenerateTool(deps: ImageToolDeps): Tool {
  return declareTool<ImageGenerateParameters, ImageToolDeps>({
    name: "image_generate",
    description:
      "Make a picture from a description. The images are saved in the workspace (images/) and sent to the user with your reply; don't describe them at length unless asked.",
    parameters: imageGenerateParameters(deps.maxImages ?? 4),
    toolset: "image",
    label: (args) => `🎨 ${args.prompt.slice(0, 60)}${args.prompt.length > 60 ? "…" : ""}`,
    implementation: imageRuns("image_generate"),
  }).with(deps);
}
