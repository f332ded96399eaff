/**
 * The `send_message` tool's declaration; its implementation (`impl.ts`) loads on its first call. The
 * process binds it to what it sends files with: `sendMessageTool.with(deps)`.
 */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";
import type { ToolContext } from "../../types.js";

/** `send_message`'s arguments. */
export const sendMessageParameters = z
  .object({
    target: z
      .string()
      .min(1)
      .max(500)
      .describe('"origin", <platform>:<chat id>, email:<address>, or <platform>'),
    text: z.string().max(20_000).optional().describe("The message, Markdown."),
    file: z.string().min(1).optional().describe("A workspace path of a file to send with it."),
  })
  .refine((a) => Boolean(a.text?.trim() || a.file), { message: "give text, file, or both" });

/** What `send_message` runs with. */
export interface SendMessageToolDeps {
  /**
   * Copies a file of the session's workspace (read where its commands run) to a file of the gateway's
   * own that the outbox may send later, or throws a HeraldError saying why not (missing, a folder,
   * outside the workspace). Undefined where there are no workspaces: `file` is then refused.
   */
  exportFile?: ((path: string, ctx: ToolContext) => Promise<{ path: string; fileName: string }>) | undefined;
}

/** `send_message` (toolset "messaging"); bound without deps it refuses files. */
export const sendMessageTool = declareTool<typeof sendMessageParameters, SendMessageToolDeps | undefined>({
  name: "send_message",
  description:
    'Send a message or a file now, separately from your reply: to this chat (target "origin"), or, for the owner only, to another chat: <platform>:<chat id> (e.g. telegram:123456), email:<address>, or a platform name for its home channel. Your reply still follows as usual.',
  parameters: sendMessageParameters,
  toolset: "messaging",
  label: (args) => `✉️ ${args.target}`,
  implementation: () => import("./impl.js").then((m) => m.runSendMessage),
});
