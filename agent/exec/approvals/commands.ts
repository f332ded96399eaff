/**
 * `/approve [always] [id]` and `/deny [id]`: the user's answer to a pending request. An answer starts a
 * turn of the session that resumes the held call (`TurnResume`): approved, the worker runs exactly that
 * call and the model carries on with its output as the call's result; denied, the result says so.
 * Nothing runs without that turn. In groups only the person who asked may answer. The id (what the
 * prompt's buttons send) must name the pending request: a click on an old prompt never answers a newer
 * one.
 */
import type { CommandModule, CommandResult } from "../../../core/commands.js";
import {
  type ApprovalStore,
  answerText,
  type PendingApproval,
  resumeOf,
  shortRequestId,
} from "./requests.js";

/** `always` and the request id in an answer's arguments (`always 3f2a1b2c`, `3f2a1b2c`, ``). */
function parseAnswer(args: string): { always: boolean; ref: string | undefined } {
  const words = args.trim().toLowerCase().split(/\s+/).filter(Boolean);
  return {
    always: words.includes("always"),
    ref: words.find((w) => /^[0-9a-f]{8}$/.test(w)),
  };
}

/**
 * `/approve` and `/deny` on `store`. `onAnswered` hears each accepted answer with the note its prompt
 * gets ("✓ Approved") and whether it came by a click. Must not throw.
 */
export function approvalCommands(
  store: ApprovalStore,
  now: () => number = Date.now,
  onAnswered?: (pending: PendingApproval, note: string, viaButton: boolean) => void,
): CommandModule {
  const answerable = (
    sessionKey: string,
    senderId: string,
    chatType: string,
    ref: string | undefined,
  ): PendingApproval | string => {
    const pending = store.pending(sessionKey);
    if (!pending) {
      // A click on someone else's prompt (in groups each person has their own session by default).
      const theirs = ref === undefined ? undefined : store.all().find((p) => shortRequestId(p.id) === ref);
      if (theirs && theirs.userId !== senderId) return "Only the person who asked can answer this request.";
      return "Nothing is waiting for your approval.";
    }
    if (ref !== undefined && ref !== shortRequestId(pending.id))
      return "That request is no longer waiting; answer the latest one.";
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
        description: "run the command I asked about (/approve always: allow its kinds for this session)",
        run: ({ sessionKey, message, args }): CommandResult => {
          const { always, ref } = parseAnswer(args);
          const pending = answerable(sessionKey, message.sender.id, message.chatType, ref);
          if (typeof pending === "string") return pending;
          store.approve(sessionKey, always);
          onAnswered?.(pending, always ? "✓ Approved (always)" : "✓ Approved", message.viaButton === true);
          const resume = resumeOf(pending, "approved", "the user");
          if (resume) return { turnInput: answerText(pending, "approved", "the user"), resume };
          const scope = always ? " (and commands of this kind for the rest of this session)" : "";
          return {
            turnInput: `[The user approved running this command${scope}. Run it now with the terminal tool, exactly as written:]\n${pending.command}`,
          };
        },
      },
      deny: {
        description: "don't run the command I asked about",
        run: ({ sessionKey, message, args }): CommandResult => {
          const pending = answerable(sessionKey, message.sender.id, message.chatType, parseAnswer(args).ref);
          if (typeof pending === "string") return pending;
          store.drop(sessionKey);
          onAnswered?.(pending, "✗ Denied", message.viaButton === true);
          const resume = resumeOf(pending, "denied", "the user");
          if (resume) return { turnInput: answerText(pending, "denied", "the user"), resume };
          return {
            turnInput: `[The user denied running this command. Do not run it; say what you will do instead:]\n${pending.command}`,
          };
        },
      },
    },
  };
}
