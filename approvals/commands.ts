/**
 * `/approve [always]` and `/deny`: the user's answer to a pending request. An answer starts a turn of
 * the session whose input tells the agent (run it now, or don't); nothing runs without that turn. In
 * groups only the person who asked may answer.
 */
import type { CommandModule, CommandResult } from "../core/commands.js";
import type { ApprovalStore, PendingApproval } from "./requests.js";

/** `/approve` and `/deny` on `store`. */
export function approvalCommands(store: ApprovalStore, now: () => number = Date.now): CommandModule {
  const answerable = (sessionKey: string, senderId: string, chatType: string): PendingApproval | string => {
    const pending = store.pending(sessionKey);
    if (!pending) return "Nothing is waiting for your approval.";
    if (pending.expiresAt <= now()) {
      store.drop(sessionKey);
      return "That request lapsed; nothing was run. Ask again if you still want it.";
    }
    if (chatType === "group" && pending.userId !== senderId)
      return "Only the person who asked can answer this request.";
    return pending;
  };
  return {
    commands: {
      approve: {
        description: "run the command I asked about (/approve always: allow its kind for this session)",
        run: ({ sessionKey, message, args }): CommandResult => {
          const pending = answerable(sessionKey, message.sender.id, message.chatType);
          if (typeof pending === "string") return pending;
          const always = /^always\b/i.test(args.trim());
          store.approve(sessionKey, always);
          const scope = always ? " (and commands of this kind for the rest of this session)" : "";
          return {
            turnInput: `[The user approved running this command${scope}. Run it now with the terminal tool, exactly as written:]\n${pending.command}`,
          };
        },
      },
      deny: {
        description: "don't run the command I asked about",
        run: ({ sessionKey, message }): CommandResult => {
          const pending = answerable(sessionKey, message.sender.id, message.chatType);
          if (typeof pending === "string") return pending;
          store.drop(sessionKey);
          return {
            turnInput: `[The user denied running this command. Do not run it; say what you will do instead:]\n${pending.command}`,
          };
        },
      },
    },
  };
}
