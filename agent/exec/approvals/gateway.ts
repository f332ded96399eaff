/**
 * Approvals of dangerous commands on the gateway: the request store on the gateway's state,
 * `/approve` and `/deny`, `/stop` and session ends dropping a request, a timer that lets lapsed
 * requests go, and at start the requests a previous process left asked again. Every answer (typed,
 * clicked, from the dashboard, or none in time) starts a turn that resumes the held call
 * (`TurnResume`); the worker runs it there on approval. A request that ends without such a turn
 * (stopped, replaced by a newer one) leaves its step in the session, saying the call did not run.
 */
import type { CommandModule } from "../../../core/commands.js";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { GatewayEvents, TurnControl, TurnResume } from "../../../core/turn.js";
import { resumedStep } from "../../../core/turn-steps.js";
import type { ChatMessage, ChatRef, KeyValueStore } from "../../../core/types.js";
import { approvalCommands } from "./commands.js";
import {
  ApprovalStore,
  type ApprovalsStateApi,
  answerText,
  approvalButtonData,
  approvalButtons,
  approvalPrompt,
  type PendingApproval,
  resumeOf,
} from "./requests.js";

/** What approvals need of the gateway (`GatewayRunner` has this shape). */
export interface ApprovalsGateway extends GatewayEvents<{ type: "session-ended"; session: { key: string } }> {
  state: {
    kv(namespace: string): KeyValueStore;
    transaction<T>(fn: () => T): T;
    sessions: {
      get(sessionId: string): { endedAt?: number | undefined } | undefined;
      append(sessionId: string, messages: ChatMessage[]): unknown;
    };
  };
  control: Pick<TurnControl, "submit" | "notify">;
  /** Delivered prompts with buttons: a request answered without a click loses its buttons. */
  prompts: {
    settle(chat: ChatRef, data: string, note: string, options?: { edit?: boolean; early?: boolean }): void;
  };
  commands: { add(module: CommandModule): unknown };
  /** Adds what /stop also stops: asked inside the inbound transaction, returns how many it stopped. */
  addStopper(stopper: (sessionKey: string) => number): unknown;
}

/** The settings approvals read (`HeraldConfig` has this shape). */
export interface ApprovalsSettings {
  exec: { approvalTimeoutS: number };
}

export interface Approvals {
  /** The `StateClient.approvals` member the terminal tool uses. */
  stateApi: ApprovalsStateApi;
  /** Asks again what a previous process left waiting; starts the lapse timer. Call after `runner.start()`. */
  start(): void;
  stop(): void;
  /** Every pending request (the dashboard lists them). */
  pending(): PendingApproval[];
  /**
   * Answers a session's pending request as `/approve` (once) or `/deny` in its chat would: a turn
   * resumes the held call (run on approval). False when nothing is waiting there (or it lapsed).
   */
  answer(sessionKey: string, approve: boolean): boolean;
}

/** Builds approvals on the gateway (registers its commands and runner hooks at once). */
export function createApprovals(
  config: ApprovalsSettings,
  ports: { gateway: ApprovalsGateway; logger: Logger },
): Approvals {
  return new GatewayApprovals(config.exec.approvalTimeoutS * 1000, ports.gateway, ports.logger);
}

/** Approval requests in the gateway's state, answered in chats, from the dashboard, or by the clock. */
class GatewayApprovals implements Approvals {
  readonly stateApi: ApprovalsStateApi;
  readonly #store: ApprovalStore;
  readonly #runner: ApprovalsGateway;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number, runner: ApprovalsGateway, logger: Logger) {
    const { state } = runner;
    const store = new ApprovalStore(state.kv("approvals"), timeoutMs);
    this.#store = store;
    this.#runner = runner;
    this.#timeoutMs = timeoutMs;
    this.#log = logger.child({ component: "approvals" });
    const settle = this.#settle.bind(this);
    runner.commands.add(approvalCommands(store, Date.now, settle));
    runner.addStopper((key) =>
      state.transaction(() => {
        const dropped = store.drop(key);
        if (dropped) {
          settle(dropped, "✗ Stopped: nothing was run.");
          this.#close(dropped, "the user stopped it (/stop) before answering");
        }
        return dropped ? 1 : 0;
      }),
    );
    runner.on("session-ended", ({ session: ended }) =>
      state.transaction(() => {
        const pending = store.pending(ended.key);
        if (pending) settle(pending, "✗ The session ended: nothing was run.");
        store.forget(ended.key);
      }),
    );
    this.stateApi = {
      check: async (key, command, ruleId) => state.transaction(() => store.check(key, command, ruleId)),
      request: async (request) => {
        const pending = state.transaction(() => {
          const older = store.pending(request.sessionKey);
          if (older) {
            settle(older, "↓ Replaced by a newer request.");
            this.#close(older, "a newer approval request replaced this one before the user answered");
          }
          return store.request(request);
        });
        return { id: pending.id, expiresAt: pending.expiresAt };
      },
    };
  }

  start(): void {
    for (const pending of this.#store.all()) {
      if (pending.expiresAt <= Date.now()) continue;
      // Only a prompt already delivered: the one asked now has the same buttons.
      this.#settle(pending, "↓ Asked again below.", false, false);
      this.#runner.control.notify(
        pending.chat,
        `(Still waiting after a restart.)\n${approvalPrompt(pending)}`,
        {
          buttons: approvalButtons(pending.id),
        },
      );
    }
    const every = Math.max(250, Math.min(15_000, Math.floor(this.#timeoutMs / 2)));
    this.#timer = setInterval(() => {
      try {
        this.#lapse();
      } catch (err) {
        this.#log.warn({ error: describeError(err) }, "approval lapse check failed");
      }
    }, every);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  pending(): PendingApproval[] {
    return this.#store.all();
  }

  answer(sessionKey: string, approve: boolean): boolean {
    return this.#runner.state.transaction(() => {
      const pending = this.#store.pending(sessionKey);
      if (!pending || pending.expiresAt <= Date.now()) return false;
      if (approve) this.#store.approve(sessionKey, false);
      else this.#store.drop(sessionKey);
      this.#settle(pending, approve ? "✓ Approved from the dashboard" : "✗ Denied from the dashboard");
      const by = "the owner from the dashboard";
      if (approve)
        this.#resume(
          pending,
          "approved",
          by,
          "[The owner approved running this command from the dashboard. Run it now with the terminal tool, exactly as written:]",
        );
      else
        this.#resume(
          pending,
          "denied",
          by,
          "[The owner denied running this command from the dashboard. Do not run it; say what you will do instead:]",
        );
      return true;
    });
  }

  /** A prompt answered without a click (typed, lapsed, stopped, from the dashboard) loses its buttons. */
  #settle(pending: PendingApproval, note: string, viaButton = false, early = true): void {
    this.#runner.prompts.settle(pending.chat, approvalButtonData(pending.id), note, {
      edit: !viaButton,
      early,
    });
  }

  /** Keeps a request's step in its session when no turn will resume it (inside a transaction). */
  #close(pending: PendingApproval, why: string): void {
    if (!pending.step || !pending.call) return;
    const { sessions } = this.#runner.state;
    const session = sessions.get(pending.sessionId);
    if (!session || session.endedAt !== undefined) return;
    const held = { approvalId: pending.id, call: pending.call, step: pending.step };
    sessions.append(pending.sessionId, resumedStep(held, `not run: ${why}.`));
  }

  /** Starts the turn that resumes `pending` with `answer` (a request of an older release: told in words). */
  #resume(pending: PendingApproval, answer: TurnResume["answer"], by: string, words: string): void {
    const turn = resumeOf(pending, answer, by);
    this.#runner.control.submit({
      id: `t${answer[0]}${pending.id.replaceAll("-", "")}`,
      sessionId: pending.sessionId,
      sessionKey: pending.sessionKey,
      chat: pending.chat,
      userId: pending.userId,
      source: "chat",
      input: turn ? answerText(pending, answer, by) : `${words}\n${pending.command}`,
      ...(turn ? { resume: turn } : {}),
    });
  }

  /** Lets the requests past their time go: each one's turn resumes, told nobody answered. */
  #lapse(): void {
    const now = Date.now();
    const { state } = this.#runner;
    for (const pending of this.#store.all()) {
      if (pending.expiresAt > now) continue;
      state.transaction(() => this.#store.drop(pending.sessionKey));
      this.#settle(pending, "⌛ Lapsed: nothing was run.");
      const session = state.sessions.get(pending.sessionId);
      if (!session || session.endedAt !== undefined) continue;
      const minutes = Math.max(1, Math.round(this.#timeoutMs / 60_000));
      const words = `[Nobody answered the approval request within ${minutes} minute${minutes === 1 ? "" : "s"}; this command was not run:]`;
      this.#resume(pending, "lapsed", "nobody", words);
      this.#log.info({ sessionKey: pending.sessionKey }, "approval request lapsed");
    }
  }
}
