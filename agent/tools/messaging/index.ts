/**
 * `send_message` (toolset "messaging"): the agent sends a message or a file to its own chat, or, in the
 * owner's conversations, to another chat (`telegram:123`, `email:x@y`, a platform's home channel).
 * Delivery goes through the gateway's durable outbox (the StateClient's `chat.send`, so it works from
 * workers on Redis), once per call: a turn run again after a crash does not send twice.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { HeraldError } from "../../../core/errors.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";

export { workspaceExporter } from "./export.js";
export {
  createMessageSender,
  type MessagingConfig,
  type MessagingGateway,
  type MessagingPorts,
  SENT_MESSAGES_NAMESPACE,
} from "./gateway.js";

/** What `send_message` runs with. */
export interface SendMessageToolDeps {
  /**
   * Copies a file of the session's workspace (read where its commands run) to a file of the gateway's
   * own that the outbox may send later, or throws a HeraldError saying why not (missing, a folder,
   * outside the workspace). Undefined where there are no workspaces: `file` is then refused.
   */
  exportFile?: ((path: string, ctx: ToolContext) => Promise<{ path: string; fileName: string }>) | undefined;
}

/** `send_message`, bound to `deps`. */
export function sendMessageTool(deps: SendMessageToolDeps = {}): Tool {
  return defineTool({
    name: "send_message",
    description:
      'Send a message or a file now, separately from your reply: to this chat (target "origin"), or, for the owner only, to another chat: <platform>:<chat id> (e.g. telegram:123456), email:<address>, or a platform name for its home channel. Your reply still follows as usual.',
    parameters: z
      .object({
        target: z
          .string()
          .min(1)
          .max(500)
          .describe('"origin", <platform>:<chat id>, email:<address>, or <platform>'),
        text: z.string().max(20_000).optional().describe("The message, Markdown."),
        file: z.string().min(1).optional().describe("A workspace path of a file to send with it."),
      })
      .refine((a) => Boolean(a.text?.trim() || a.file), { message: "give text, file, or both" }),
    toolset: "messaging",
    label: (args) => `✉️ ${args.target}`,
    async execute(args, ctx) {
      const chat = ctx.state.chat;
      if (!chat?.send)
        return {
          content: "error: send_message is not available in this process (no gateway state)",
          isError: true,
        };
      let files: { path: string; fileName: string }[] | undefined;
      if (args.file) {
        if (!deps.exportFile)
          throw new HeraldError("there is no workspace here to send files from: send text only", {
            code: "invalid_input",
          });
        files = [await deps.exportFile(args.file, ctx)];
      }
      // The same call of the same turn (run again after a crash) has the same key: sent once.
      const key = ctx.turnId && ctx.callId ? `send:${ctx.turnId}:${ctx.callId}` : `send:${randomUUID()}`;
      const caller = { chat: ctx.origin.chat, userId: ctx.origin.userId };
      const outcome = await chat.send(caller, args.target, { text: args.text ?? "", files }, key);
      return outcome.duplicate
        ? `Already sent to ${outcome.to} by an earlier run of this turn; not sent again.`
        : `Sent to ${outcome.to}.`;
    },
  });
}
