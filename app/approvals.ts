/**
 * Approvals of dangerous commands, wired for the gateway (part of the composition root): the request
 * store on the gateway's state, `/approve` and `/deny`, `/stop` and session ends dropping a request, a
 * timer that lets lapsed requests go (and tells the agent in a turn of its own), and at start the
 * requests a previous process left asked again. Nothing here runs a command: an approval only lets
 * the agent's next `terminal` call of exactly that command through.
 */
import type { StateClient } from "../agent/types.js";
import {
  ApprovalStore,
  approvalButtonData,
  approvalButtons,
  approvalCommands,
  approvalPrompt,
  type PendingApproval,
} from "../approvals/index.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { GatewayRunner } from "../gateway/runner.js";

export interface Approvals {
  /** The `StateClient.approvals` member the terminal tool uses. */
  stateApi: NonNullable<StateClient["approvals"]>;
  /** Asks again what a previous process left waiting; starts the lapse timer. Call after `runner.start()`. */
  start(): void;
  stop(): void;
  /** Every pending request (the dashboard lists them). */
  pending(): PendingApproval[];
  /**
   * Answers a session's pending request as `/approve` (once) or `/deny` in its chat would: the agent's
   * next turn is told. False when nothing is waiting there (or it lapsed).
   */
  answer(sessionKey: string, approve: boolean): boolean;
}

/** Builds approvals on `runner` (registers its commands and listeners at once). */
export function createApprovals(runner: GatewayRunner, timeoutMs: number, logger: Logger): Approvals {
  const { state } = runner;
  const store = new ApprovalStore(state.kv("approvals"), timeoutMs);
  const log = logger.child({ component: "approvals" });
  // A prompt answered without a click (typed, lapsed, stopped, from the dashboard) loses its buttons.
  const settle = (pending: PendingApproval, note: string, viaButton = false, early = true) =>
    runner.prompts.settle(pending.chat, approvalButtonData(pending.id), note, { edit: !viaButton, early });
  runner.commands.add(approvalCommands(store, Date.now, settle));
  runner.stopped.add((key) =>
    state.transaction(() => {
      const dropped = store.drop(key);
      if (dropped) settle(dropped, "✗ Stopped: nothing was run.");
      return dropped ? 1 : 0;
    }),
  );
  runner.sessionEnded.add((ended) =>
    state.transaction(() => {
      const pending = store.pending(ended.key);
      if (pending) settle(pending, "✗ The session ended: nothing was run.");
      store.forget(ended.key);
    }),
  );

  const lapse = () => {
    const now = Date.now();
    for (const pending of store.all()) {
      if (pending.expiresAt > now) continue;
      state.transaction(() => store.drop(pending.sessionKey));
      settle(pending, "⌛ Lapsed: nothing was run.");
      const session = state.sessions.get(pending.sessionId);
      if (!session || session.endedAt !== undefined) continue;
      const minutes = Math.max(1, Math.round(timeoutMs / 60_000));
      runner.control.submit({
        id: `ta${pending.id.replaceAll("-", "")}`,
        sessionId: pending.sessionId,
        sessionKey: pending.sessionKey,
        chat: pending.chat,
        userId: pending.userId,
        source: "chat",
        input: `[Nobody answered the approval request within ${minutes} minute${minutes === 1 ? "" : "s"}; this command was not run:]\n${pending.command}`,
      });
      log.info({ sessionKey: pending.sessionKey }, "approval request lapsed");
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    stateApi: {
      check: async (key, command, ruleId) => state.transaction(() => store.check(key, command, ruleId)),
      request: async (request) => {
        const pending = state.transaction(() => store.request(request));
        return { id: pending.id, expiresAt: pending.expiresAt };
      },
    },
    start() {
      for (const pending of store.all()) {
        if (pending.expiresAt <= Date.now()) continue;
        // Only a prompt already delivered: the one asked now has the same buttons.
        settle(pending, "↓ Asked again below.", false, false);
        runner.control.notify(pending.chat, `(Still waiting after a restart.)\n${approvalPrompt(pending)}`, {
          buttons: approvalButtons(pending.id),
        });
      }
      const every = Math.max(250, Math.min(15_000, Math.floor(timeoutMs / 2)));
      timer = setInterval(() => {
        try {
          lapse();
        } catch (err) {
          log.warn({ error: describeError(err) }, "approval lapse check failed");
        }
      }, every);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
    pending: () => store.all(),
    answer(sessionKey, approve) {
      return state.transaction(() => {
        const pending = store.pending(sessionKey);
        if (!pending || pending.expiresAt <= Date.now()) return false;
        if (approve) store.approve(sessionKey, false);
        else store.drop(sessionKey);
        settle(pending, approve ? "✓ Approved from the dashboard" : "✗ Denied from the dashboard");
        runner.control.submit({
          id: `td${pending.id.replaceAll("-", "")}`,
          sessionId: pending.sessionId,
          sessionKey: pending.sessionKey,
          chat: pending.chat,
          userId: pending.userId,
          source: "chat",
          input: approve
            ? `[The owner approved running this command from the dashboard. Run it now with the terminal tool, exactly as written:]\n${pending.command}`
            : `[The owner denied running this command from the dashboard. Do not run it; say what you will do instead:]\n${pending.command}`,
        });
        return true;
      });
    },
  };
}
