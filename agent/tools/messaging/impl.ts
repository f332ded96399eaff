/** What `send_message` does (`declaration.ts` declares it). */
import { randomUUID } from "node:crypto";
import { HeraldError } from "../../../core/errors.js";
import type { ToolRun } from "../../tool-declaration.js";
import type { SendMessageToolDeps, sendMessageParameters } from "./declaration.js";

/** Runs one `send_message` call. */
export const runSendMessage: ToolRun<typeof sendMessageParameters, SendMessageToolDeps | undefined> = async (
  args,
  ctx,
  deps,
) => {
  const chat = ctx.state.chat;
  if (!chat?.send)
    return {
      content: "error: send_message is not available in this process (no gateway state)",
      isError: true,
    };
  let files: { path: string; fileName: string }[] | undefined;
  if (args.file) {
    if (!deps?.exportFile)
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
};
