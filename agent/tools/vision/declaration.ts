/**
 * The `vision_analyze` tool's declaration; its implementation (`tool.ts`) loads on its first call.
 */

import { z } from "zod";
import { declareTool, runsFrom } from "../../tool-declaration.js";
import type { Tool, ToolContext } from "../../types.js";
import type { AllowPrivate } from "../web/types.js";
import type { VisionEndpoint } from "./client.js";

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

/** `vision_analyze` as the model gets it. */
export const visionAnalyzeParameters = z.object({
  image: z.string().min(1).describe("A workspace path (e.g. an attachment the user sent) or an http(s) URL."),
  question: z.string().min(1).max(4000).describe("What to find out, e.g. 'What does the sign say?'"),
});

const visionRuns = runsFrom(() => import("./tool.js"), "visionToolRuns");

/** `vision_analyze`, bound to `deps`. */
export function visionTool(deps: VisionToolDeps): Tool {
  return declareTool<typeof visionAnalyzeParameters, VisionToolDeps>({
    name: "vision_analyze",
    description:
      "Look at an image and answer a question about it (describe it, read its text, find something in it).",
    parameters: visionAnalyzeParameters,
    toolset: "vision",
    label: (args) => `👁️ ${args.image}`,
    implementation: visionRuns("vision_analyze"),
  }).with(deps);
}
