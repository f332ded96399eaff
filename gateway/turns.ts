/**
 * The turn coordinator: owns the active turn of each session key, claims the next pending turn when a
 * key is free, builds its job (through the injected context source) and hands it to the queue, follows
 * the queue's events, and commits results. At most one turn per key is active; the next starts only
 * after the previous one committed, so its history always holds the previous answer.
 */
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue, QueueEvent, TurnJob, TurnRecord, TurnResult } from "../core/turn.js";
import { inputMessages, resumedStep } from "../core/turn-steps.js";
import type { KeyValueStore, PlatformAdapter } from "../core/types.js";
import type { OutboxItem } from "../sessions/types.js";
import { crashedTurnResult } from "./crashed-turns.js";
import { TurnFeedback } from "./feedback.js";
import type { OutboxDispatcher } from "./outbox-dispatcher.js";
import { recordResult } from "./turn-commit.js";
import type { Effect, RunnerEvent, RunnerSettings, RunnerState, TurnContextSource } from "./types.js";
import type { UnitOfWork } from "./work.js";

export interface TurnCoordinatorOptions {
  state: RunnerState;
  queue: JobQueue;
  work: UnitOfWork;
  settings: Pick<RunnerSettings, "model">;
  context: TurnContextSource;
  adapters: ReadonlyMap<string, PlatformAdapter>;
  outbox: OutboxDispatcher;
  /** Tells the runner's events (`turn-started`, `turn-finished`). Never throws. */
  emit: (event: RunnerEvent) => void;
  engaged: KeyValueStore;
  logger: Logger;
  now: () => number;
}

interface ActiveTurn {
  turn: TurnRecord;
  feedback: TurnFeedback | undefined;
}

export class TurnCoordinator {
  private readonly active = new Map<string, ActiveTurn>();
  private readonly activeByTurn = new Map<string, string>();

  constructor(private readonly o: TurnCoordinatorOptions) {}

  /** Starts the next turn of a session if none is running. */
  dispatch(key: string): void {
    // A running turn starts the next one when it commits; no transaction for nothing.
    if (this.active.has(key)) return;
    this.o.work.run((effects) => this.claimNext(key, effects));
  }

  /**
   * Marks the next pending turn of `key` running and builds its job (inside the caller's transaction);
   * the job is enqueued by the effect it adds, after commit. Nothing happens while a turn of the key is
   * active. `created` is the turn this transaction just created, which needs no read back.
   */
  claimNext(key: string, effects: Effect[], created?: TurnRecord): void {
    if (this.active.has(key)) return;
    const { state } = this.o;
    const head = state.turns.nextOpen(key);
    if (!head) return;
    const next = head.id === created?.id ? created : state.turns.get(head.id);
    if (!next) return;
    if (next.status === "pending" && !state.turns.markRunning(next.id, this.o.now())) return;
    this.activate(next, key, effects);
  }

  /**
   * Journals a new turn of `key` through `create` and claims the key's next turn (inside the caller's
   * transaction), as `claimNext` after a pending `create` would: when nothing of the key is open or
   * active the new turn is the next one, and is journalled running at once (one write, not two).
   */
  claimNew(key: string, effects: Effect[], create: (running: boolean) => TurnRecord): TurnRecord {
    if (this.active.has(key) || this.o.state.turns.nextOpen(key)) {
      const created = create(false);
      this.claimNext(key, effects, created);
      return created;
    }
    const created = create(true);
    this.activate(created, key, effects);
    return created;
  }

  /** Makes `next` (journalled running) the key's active turn; its job is enqueued after the commit. */
  private activate(next: TurnRecord, key: string, effects: Effect[]): void {
    const { state } = this.o;
    const chatType = next.inbound?.chatType ?? state.sessions.get(next.sessionId)?.chatType ?? "dm";
    const adapter = this.o.adapters.get(next.chat.platform);
    const feedback = adapter
      ? new TurnFeedback(adapter, next.chat, next.inbound?.messageId, this.o.logger)
      : undefined;
    this.active.set(key, { turn: next, feedback });
    this.activeByTurn.set(next.id, key);
    const job = this.buildJob(next, key, chatType);
    effects.push(() => this.startJob(job, key, feedback));
  }

  private buildJob(turn: TurnRecord, key: string, chatType: "dm" | "group"): TurnJob {
    const context = this.o.context(turn, chatType);
    return {
      kind: "turn",
      turnId: turn.id,
      origin: {
        sessionId: turn.sessionId,
        sessionKey: key,
        chat: turn.chat,
        chatType,
        userId: turn.userId,
        userName: turn.inbound?.sender.name,
      },
      history: context.history,
      input: {
        text: turn.input,
        attachments: turn.inbound?.attachments,
        ...(turn.inbound?.clientResults ? { clientResults: turn.inbound.clientResults } : {}),
      },
      ...(turn.resume ? { resume: turn.resume } : {}),
      systemPrompt: withInstructions(context.systemPrompt, turn.inbound?.instructions),
      ...(turn.inbound?.clientTools?.length ? { clientTools: turn.inbound.clientTools } : {}),
      toolsets: turn.options?.toolsets ?? context.toolsets,
      ...(context.eagerToolsets ? { eagerToolsets: context.eagerToolsets } : {}),
      model: turn.options?.model ?? context.model,
      ...(context.reasoningEffort ? { reasoningEffort: context.reasoningEffort } : {}),
      maxIterations: this.o.settings.model.maxIterations,
      // A voice-only reply has no text to show as it is written.
      streamText: turn.inbound?.streamReply === true && context.voiceReply !== "only",
      ...(context.voiceReply ? { voiceReply: context.voiceReply } : {}),
      ...(context.recall && !turn.resume ? { recall: context.recall } : {}),
      ...(context.insights && !turn.resume ? { insights: context.insights } : {}),
      createdAt: turn.createdAt,
    };
  }

  private startJob(job: TurnJob, key: string, feedback: TurnFeedback | undefined): void {
    feedback?.start();
    this.o.emit({ type: "turn-started", job });
    this.o.queue.enqueue(job, { id: job.turnId, orderingKey: key }).catch((err: unknown) => {
      this.warn("enqueue failed", err);
      this.commit(job.turnId, {
        kind: "failed",
        turnId: job.turnId,
        userMessage:
          "I couldn't start working on that (the job queue is unavailable). Please try again shortly.",
        error: describeError(err),
        retryable: true,
        messages: job.resume
          ? resumedStep(job.resume, "not run: the job queue was unavailable.")
          : inputMessages(job.input),
      });
    });
  }

  /**
   * Cancels every open turn of `key` (inside the current transaction). With `keepInput` the user's text
   * of each cancelled turn is kept in the session, so the next turn still sees it.
   */
  cancel(key: string, reason: string, effects: Effect[], keepInput: boolean): number {
    const { state, queue } = this.o;
    let count = 0;
    for (const turn of state.turns.openTurns(key)) {
      if (!state.turns.finish(turn.id, "cancelled", reason, this.o.now())) continue;
      count++;
      // A resumed call keeps its step, so the history says what became of it.
      if (turn.resume) {
        const why =
          turn.status === "running"
            ? `stopped before it finished (${reason}); it may have run in part: check before running it again.`
            : `not run: ${reason}.`;
        state.sessions.append(turn.sessionId, resumedStep(turn.resume, why), { turnId: turn.id });
      } else if (keepInput && turn.input) {
        state.sessions.append(turn.sessionId, [{ role: "user", content: turn.input }], { turnId: turn.id });
      }
      effects.push(() => {
        if (turn.status === "running")
          void queue.cancel(turn.id).catch((err: unknown) => this.warn("cancel failed", err));
        this.release(key, turn.id);
        if (turn.inbound) {
          const event = {
            type: "ended" as const,
            replyToId: turn.inbound.messageId,
            status: "cancelled" as const,
          };
          this.o.adapters.get(turn.chat.platform)?.onTurnEvent?.(turn.chat, event);
        }
      });
    }
    if (count) effects.push(() => this.dispatch(key));
    return count;
  }

  /** Follows the queue: progress to the chat, results committed. */
  readonly onQueueEvent = (event: QueueEvent): void => {
    switch (event.type) {
      case "progress": {
        const active = this.activeOf(event.jobId);
        if (!active) return;
        const p = event.progress;
        if (p.type === "tool-start")
          active.feedback?.toolLine(p.label ?? `⚙️ ${p.name}${p.summary ? `: ${p.summary}` : ""}`, p.callId);
        else if (p.type === "tool-end")
          active.feedback?.toolEnd({
            callId: p.callId,
            ok: p.ok,
            durationMs: p.durationMs,
            result: p.result,
          });
        else if (p.type === "status") active.feedback?.statusLine(p.text);
        else if (p.type === "text-delta" && active.turn.inbound) {
          const { turn } = active;
          const replyToId = turn.inbound?.messageId ?? "";
          this.o.adapters
            .get(turn.chat.platform)
            ?.onTurnEvent?.(turn.chat, { type: "delta", replyToId, text: p.text });
        }
        return;
      }
      case "completed":
        this.commit(event.jobId, event.result);
        return;
      case "failed":
        this.commit(
          event.jobId,
          event.code === "turn_crashed"
            ? crashedTurnResult(event.jobId, event.error)
            : {
                kind: "failed",
                turnId: event.jobId,
                userMessage: "Something went wrong while working on that; please try again.",
                error: event.error,
                retryable: event.retryable,
                messages: [],
              },
        );
        return;
    }
  };

  /** Records a turn's result and queues its reply; a result for a turn already final is stale and dropped. */
  commit(turnId: string, result: TurnResult): void {
    const { state } = this.o;
    const turn = this.activeOf(turnId)?.turn ?? state.turns.get(turnId);
    if (!turn || !["pending", "running"].includes(turn.status)) return;
    let items: OutboxItem[] | undefined;
    this.o.work.run((effects) => {
      items = recordResult(state, turn, result, {
        now: this.o.now(),
        engaged: this.o.engaged,
        log: this.o.logger,
      });
      if (!items) return;
      this.release(turn.sessionKey, turnId);
      for (const item of items) effects.push(() => this.o.outbox.deliver(item));
      effects.push(() => this.o.emit({ type: "turn-finished", turn, result }));
      this.claimNext(turn.sessionKey, effects);
    });
  }

  /** Ids of the turns this coordinator runs now (marked running in the journal by it). */
  runningTurnIds(): string[] {
    return [...this.activeByTurn.keys()];
  }

  /** Ends every turn's feedback (the process stops; open turns stay in the journal). */
  async stop(): Promise<void> {
    await Promise.all([...this.active.values()].map((a) => a.feedback?.end()));
    this.active.clear();
    this.activeByTurn.clear();
  }

  private activeOf(turnId: string): ActiveTurn | undefined {
    const key = this.activeByTurn.get(turnId);
    return key ? this.active.get(key) : undefined;
  }

  /** Forgets the active turn of a key (its feedback ends). */
  private release(key: string, turnId: string): void {
    const active = this.active.get(key);
    if (!active || active.turn.id !== turnId) return;
    this.active.delete(key);
    this.activeByTurn.delete(turnId);
    void active.feedback?.end();
  }

  private warn(msg: string, err: unknown): void {
    this.o.logger.warn({ error: describeError(err) }, msg);
  }
}

/** The system prompt with an API client's instructions for this turn after it (they change per request). */
function withInstructions(systemPrompt: string, instructions: string | undefined): string {
  if (!instructions?.trim()) return systemPrompt;
  return `${systemPrompt}\n\n[Instructions of the API client for this answer:]\n${instructions.trim()}`;
}

/** The context when the composition root gives none: the stored history, a generic prompt. */
export function defaultContext(state: RunnerState, config: RunnerSettings): TurnContextSource {
  return (turn) => ({
    history: state.sessions.load(turn.sessionId).map((m) => ({ seq: m.seq, message: m.message })),
    systemPrompt: "You are Herald, a helpful assistant.",
    toolsets: config.platforms[turn.chat.platform]?.toolsets ?? config.agent.toolsets,
  });
}
