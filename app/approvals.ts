/**
 * Approvals of dangerous commands, wired for the gateway (part of the composition root): the request
 * store on the gateway's state, `/approve` and `/deny`, `/stop` and session ends dropping a request, a
 * timer that lets lapsed requests go (and tells the agent in a turn of its own), and at start the
 * requests a previous process left asked again. Nothing here runs a command: an approval only lets
 * the agent's next `terminal` call of exactly that command through.
 */
import type { StateClient } from "../agent/types.js";
import { ApprovalStore, approvalButtons, approvalCommands, approvalPrompt } from "../approvals/index.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { GatewayRunner } from "../gateway/runner.js";

export interface Approvals {
  /** The `StateClient.approvals` member the terminal tool uses. */
  stateApi: NonNullable<StateClient["approvals"]>;
  /** Asks again what a previous process left waiting; starts the lapse timer. Call after `runner.start()`. */
  start(): void;
  stop(): void;
}

/** Builds approvals on `runner` (registers its commands and listeners at once). */
export function createApprovals(runner: GatewayRunner, timeoutMs: number, logger: Logger): Approvals {
  const { state } = runner;
  const store = new ApprovalStore(state.kv("approvals"), timeoutMs);
  const log = logger.child({ component: "approvals" });
  runner.commands.add(approvalCommands(store));
  runner.stopped.add((key) => (state.transaction(() => store.drop(key)) ? 1 : 0));
  runner.sessionEnded.add((ended) => state.transaction(() => store.forget(ended.key)));

  const lapse = () => {
    const now = Date.now();
    for (const pending of store.all()) {
      if (pending.expiresAt > now) continue;
      state.transaction(() => store.drop(pending.sessionKey));
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
  };
}
