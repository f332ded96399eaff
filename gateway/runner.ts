/**
 * The GatewayRunner: every inbound message goes ledger → gating → access → command → session → turn, in
 * one SQLite transaction, and every turn goes journal → queue → worker → result → session + outbox, in
 * one more. Side effects (enqueue, cancel, deliver) run after the transaction commits, so a crash at any
 * point leaves state that `start()` finishes: open turns run again, undelivered replies go out, once.
 */
import { createHash } from "node:crypto";
import type { HeraldConfig } from "../app/config.js";
import { formatChat, sessionKey } from "../core/chat.js";
import { parseCommand } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue, QueueEvent, TurnJob, TurnResult } from "../core/turn.js";
import type {
  ChatMessage,
  ChatRef,
  InboundMessage,
  InboundOutcome,
  KeyValueStore,
  OutboundMessage,
  PlatformAdapter,
} from "../core/types.js";
import type {
  InboundLedger,
  Outbox,
  OutboxItem,
  PairingStore,
  SessionStore,
  TurnJournal,
  TurnRecord,
} from "../sessions/types.js";
import { AccessPolicy, pairingText } from "./access.js";
import { CommandRegistry } from "./commands.js";
import { TurnFeedback } from "./feedback.js";
import { OutboxDispatcher } from "./outbox-dispatcher.js";
import { registerCoreCommands } from "./runner-commands.js";

/** The durable state the runner works on (`SqliteState` implements it). */
export interface RunnerState {
  sessions: SessionStore;
  ledger: InboundLedger;
  turns: TurnJournal;
  outbox: Outbox;
  pairing: PairingStore;
  kv(namespace: string): KeyValueStore;
  transaction<T>(fn: () => T): T;
  /** Runs `effect` once what was written so far is committed (with group commit, at the batch's end). */
  afterCommit(effect: () => void): void;
  /** Resolves once what was written so far is committed. */
  committed(): Promise<void>;
}

export interface GatewayRunnerOptions {
  config: HeraldConfig;
  state: RunnerState;
  queue: JobQueue;
  logger: Logger;
  /** Builds the system prompt of a turn. @defaultValue a short generic prompt */
  systemPrompt?: (turn: TurnRecord, chatType: "dm" | "group") => string;
  now?: () => number;
}

/** Deterministic, colon-free turn id of an inbound message: a redelivery maps to the same turn. */
export function turnIdFor(platform: string, messageId: string): string {
  return `t${createHash("sha256").update(`${platform}\u0000${messageId}`).digest("hex").slice(0, 24)}`;
}

/** A session that just ended: by /new (`manual`) or by the reset policy. */
export interface EndedSession {
  id: string;
  key: string;
  reason: "manual" | "idle" | "daily";
}

interface ActiveTurn {
  turn: TurnRecord;
  feedback: TurnFeedback | undefined;
}

type Effect = () => void;

export class GatewayRunner {
  readonly adapters = new Map<string, PlatformAdapter>();
  readonly commands = new CommandRegistry();
  readonly access: AccessPolicy;
  readonly outbox: OutboxDispatcher;
  /** Told when a turn is handed to the job queue (metrics). Must not throw. */
  readonly turnStarted = new Set<(job: TurnJob) => void>();
  /** Told after a turn's result was committed (the scheduler's run history). Must not throw. */
  readonly turnFinished = new Set<(turn: TurnRecord, result: TurnResult) => void>();
  /** Told after a session ended by /new or the reset policy (the learning review). Must not throw. */
  readonly sessionEnded = new Set<(session: EndedSession) => void>();
  /** Told when an outbox item was delivered or failed for good (cron delivery reports). Must not throw. */
  readonly deliverySettled = new Set<(item: OutboxItem, outcome: "delivered" | "failed") => void>();
  private readonly active = new Map<string, ActiveTurn>();
  private readonly activeByTurn = new Map<string, string>();
  private readonly engaged: KeyValueStore;
  private unsubscribe: (() => void) | undefined;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly options: GatewayRunnerOptions) {
    this.now = options.now ?? Date.now;
    this.log = options.logger.child({ component: "runner" });
    this.access = new AccessPolicy(options.config, options.state.pairing);
    this.engaged = options.state.kv("engaged-threads");
    this.outbox = new OutboxDispatcher({
      outbox: options.state.outbox,
      transaction: (record) => options.state.transaction(record),
      adapters: this.adapters,
      logger: options.logger.child({ component: "outbox" }),
      onSettled: (item, outcome) => {
        for (const listener of this.deliverySettled) listener(item, outcome);
      },
    });
    registerCoreCommands(this);
  }

  get config(): HeraldConfig {
    return this.options.config;
  }

  get state(): RunnerState {
    return this.options.state;
  }

  /** Adds a platform adapter (before or after start). */
  addAdapter(adapter: PlatformAdapter): void {
    this.adapters.set(adapter.platform, adapter);
  }

  /** Subscribes to the queue and finishes what a previous process left: inbound, turns, replies. */
  start(): void {
    const { state, queue } = this.options;
    this.unsubscribe = queue.subscribe((event) => this.onQueueEvent(event));
    for (const message of state.ledger.unhandled()) {
      const effects: Effect[] = [];
      state.transaction(() => {
        const outcome = this.decide(message, effects);
        state.ledger.markHandled(message.platform, message.messageId, outcome);
      });
      this.afterCommit(effects);
    }
    const requeued = state.turns.requeueRunning();
    const keys = new Set(state.turns.allOpen().map((t) => t.sessionKey));
    if (requeued || keys.size) this.log.info({ requeued, sessions: keys.size }, "resuming open turns");
    for (const key of keys) this.dispatch(key);
    this.outbox.resume();
  }

  /** Stops feedback loops and delivery; open turns stay in the journal for the next start. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.outbox.stop();
    await Promise.all([...this.active.values()].map((a) => a.feedback?.end()));
    this.active.clear();
    this.activeByTurn.clear();
  }

  /** The InboundHandler adapters call. Resolves once the message is recorded and decided, durably. */
  readonly handleInbound = async (message: InboundMessage): Promise<InboundOutcome> => {
    if (!isWellFormed(message)) {
      this.log.warn(
        { platform: (message as Partial<InboundMessage>)?.platform },
        "malformed inbound message skipped",
      );
      return "malformed";
    }
    const { state } = this.options;
    const effects: Effect[] = [];
    const outcome = state.transaction(() => {
      if (!state.ledger.record(message, this.now())) return "duplicate" as const;
      const decided = this.decide(message, effects);
      state.ledger.markHandled(message.platform, message.messageId, decided);
      return decided;
    });
    this.afterCommit(effects);
    await state.committed();
    return outcome;
  };

  /** Runs `effects` in order once the writes before them are committed. */
  afterCommit(effects: Effect[]): void {
    if (effects.length === 0) return;
    this.options.state.afterCommit(() => {
      for (const effect of effects) effect();
    });
  }

  /** Tells the `sessionEnded` listeners (call after the reset committed). */
  endedSession(session: EndedSession): void {
    for (const listener of this.sessionEnded) listener(session);
  }

  /** Whether a session key's turn is running or queued now (for /status). */
  openTurns(key: string): TurnRecord[] {
    return this.options.state.turns.openTurns(key);
  }

  /** The session key of a message's sender. */
  keyOf(message: InboundMessage): string {
    return sessionKey(
      { chat: message.chat, chatType: message.chatType, userId: message.sender.id },
      this.options.config.sessions.groupSessions,
    );
  }

  /**
   * Queues a reply to `message` in the outbox (inside the current transaction) and delivers it after
   * commit through `effects`.
   */
  reply(
    message: InboundMessage,
    text: string,
    effects: Effect[],
    kind: OutboundMessage["kind"] = "reply",
  ): void {
    const item = this.options.state.outbox.add(message.chat, {
      text,
      kind,
      replyToId: message.replyToId ?? message.messageId,
      inboundMeta: message.meta,
    });
    effects.push(() => this.outbox.deliver(item));
  }

  /**
   * Cancels every open turn of `key` (inside the current transaction). With `keepInput` the user's text
   * of each cancelled turn is kept in the session, so the next turn still sees it.
   */
  cancelTurns(key: string, reason: string, effects: Effect[], keepInput: boolean): number {
    const { state, queue } = this.options;
    let count = 0;
    for (const turn of state.turns.openTurns(key)) {
      if (!state.turns.finish(turn.id, "cancelled", reason, this.now())) continue;
      count++;
      if (keepInput && turn.input) {
        state.sessions.append(turn.sessionId, [{ role: "user", content: turn.input }], { turnId: turn.id });
      }
      effects.push(() => {
        if (turn.status === "running")
          void queue.cancel(turn.id).catch((err: unknown) => this.warn("cancel failed", err));
        this.release(key, turn.id);
        const adapter = this.adapters.get(turn.chat.platform);
        if (turn.inbound) {
          adapter?.onTurnEvent?.(turn.chat, {
            type: "ended",
            replyToId: turn.inbound.messageId,
            status: "cancelled",
          });
        }
      });
    }
    if (count) effects.push(() => this.dispatch(key));
    return count;
  }

  /** Creates a turn outside the inbound path (scheduled jobs) and starts it when its session is free. */
  submitTurn(turn: Omit<TurnRecord, "status" | "attempts" | "createdAt">): TurnRecord {
    const { state } = this.options;
    const effects: Effect[] = [];
    const record = state.transaction(() => {
      const created = state.turns.create(turn, this.now());
      this.claimNext(turn.sessionKey, effects, created);
      return created;
    });
    this.afterCommit(effects);
    return record;
  }

  private decide(message: InboundMessage, effects: Effect[]): InboundOutcome {
    const { state, config } = this.options;
    const now = this.now();
    const key = this.keyOf(message);
    if (message.chatType === "group" && !message.mentioned && this.requireMention(message.platform)) {
      const threadEngaged = message.chat.threadId !== undefined && this.engaged.get(key) !== undefined;
      if (!threadEngaged) return "ignored";
    }
    const access = this.access.decide(message);
    if (access === "denied") return "unauthorized";
    if (access === "pairing") {
      const issued = state.pairing.issue(
        {
          platform: message.platform,
          userId: message.sender.id,
          userName: message.sender.name,
          chatId: message.chat.chatId,
        },
        now,
      );
      if ("limited" in issued) return "unauthorized";
      this.reply(message, pairingText(issued.code, issued.expiresAt, now), effects, "notice");
      this.log.info({ platform: message.platform, userId: message.sender.id }, "pairing code issued");
      return "pairing";
    }
    let input = message.text;
    const parsed = parseCommand(message.text);
    if (parsed) {
      const ctx = { message, args: parsed.args, sessionKey: key, now };
      const command = this.commands.get(parsed.name);
      const result = command ? command.run(ctx) : this.commands.fallback?.(parsed.name, ctx);
      if (typeof result === "object" && "turnInput" in result) {
        // A command that starts a turn (`/<skill> args`): its text is the turn's input.
        input = result.turnInput;
        if (result.after) effects.push(result.after);
      } else if (result !== undefined) {
        const { reply, after } = typeof result === "string" ? { reply: result, after: undefined } : result;
        this.reply(message, reply, effects);
        if (after) effects.push(after);
        return "command";
      }
    }
    if (!input.trim() && !message.attachments?.length) return "ignored";

    const policy = { ...config.sessions.reset, timezone: config.timezone };
    const opened = state.sessions.open(
      { chat: message.chat, chatType: message.chatType, userId: message.sender.id },
      policy,
      now,
    );
    if (opened.autoReset) {
      const why = opened.autoReset.reason === "idle" ? "after a quiet spell" : "for the new day";
      this.reply(
        message,
        `_Started a fresh session ${why}. Earlier chats stay searchable._`,
        effects,
        "notice",
      );
      const ended = { id: opened.autoReset.previousSessionId, key, reason: opened.autoReset.reason };
      effects.push(() => this.endedSession(ended));
    }
    if (message.context?.length && opened.session.messageCount === 0) {
      state.sessions.append(opened.session.id, message.context as ChatMessage[], { now });
    }
    const busyPolicy = message.platform === "api" ? "queue" : config.sessions.busyPolicy;
    if (busyPolicy === "interrupt") this.cancelTurns(key, "interrupted by a newer message", effects, true);
    const turnId = turnIdFor(message.platform, message.messageId);
    if (state.turns.get(turnId)) return "duplicate";
    const created = state.turns.create(
      {
        id: turnId,
        sessionId: opened.session.id,
        sessionKey: key,
        chat: message.chat,
        userId: message.sender.id,
        source: message.platform === "api" ? "api" : "chat",
        input,
        inbound: message,
      },
      now,
    );
    this.claimNext(key, effects, created);
    return "accepted";
  }

  private requireMention(platform: string): boolean {
    const section = (
      this.options.config as unknown as Record<string, { requireMention?: boolean } | undefined>
    )[platform];
    return section?.requireMention ?? true;
  }

  /** Starts the next turn of a session if none is running. */
  private dispatch(key: string): void {
    // A running turn starts the next one when it commits; no transaction for nothing.
    if (this.active.has(key)) return;
    const effects: Effect[] = [];
    this.options.state.transaction(() => this.claimNext(key, effects));
    this.afterCommit(effects);
  }

  /**
   * Marks the next pending turn of `key` running and builds its job (inside the caller's transaction,
   * if any); the job is enqueued by the effect it adds, after commit. Nothing happens while a turn of
   * the key is active.
   */
  private claimNext(key: string, effects: Effect[], created?: TurnRecord): void {
    if (this.active.has(key)) return;
    const { state, config } = this.options;
    const head = state.turns.nextOpen(key);
    if (!head) return;
    // The turn just created in this transaction needs no read back.
    const next = head.id === created?.id ? created : state.turns.get(head.id);
    if (!next) return;
    if (next.status === "pending" && !state.turns.markRunning(next.id, this.now())) return;
    const chatType = next.inbound?.chatType ?? state.sessions.get(next.sessionId)?.chatType ?? "dm";
    const adapter = this.adapters.get(next.chat.platform);
    const feedback = adapter
      ? new TurnFeedback(adapter, next.chat, next.inbound?.messageId, this.log)
      : undefined;
    this.active.set(key, { turn: next, feedback });
    this.activeByTurn.set(next.id, key);
    const section = (config as unknown as Record<string, { toolsets?: string[] } | undefined>)[
      next.chat.platform
    ];
    const extra = next.extra ?? {};
    const job: TurnJob = {
      kind: "turn",
      turnId: next.id,
      origin: {
        sessionId: next.sessionId,
        sessionKey: key,
        chat: next.chat,
        chatType,
        userId: next.userId,
        userName: next.inbound?.sender.name,
      },
      history: state.sessions.load(next.sessionId).map((m) => m.message),
      input: { text: next.input, attachments: next.inbound?.attachments },
      systemPrompt: this.options.systemPrompt?.(next, chatType) ?? "You are Herald, a helpful assistant.",
      toolsets: (extra["toolsets"] as string[] | undefined) ?? section?.toolsets ?? config.agent.toolsets,
      model: extra["model"] as string | undefined,
      maxIterations: config.model.maxIterations,
      streamText: next.inbound?.streamReply === true,
      createdAt: next.createdAt,
    };
    effects.push(() => this.startJob(job, key, feedback));
  }

  private startJob(job: TurnJob, key: string, feedback: TurnFeedback | undefined): void {
    feedback?.start();
    for (const listener of this.turnStarted) listener(job);
    this.options.queue.enqueue(job, { id: job.turnId, orderingKey: key }).catch((err: unknown) => {
      this.warn("enqueue failed", err);
      this.commit(job.turnId, {
        kind: "failed",
        turnId: job.turnId,
        userMessage:
          "I couldn't start working on that (the job queue is unavailable). Please try again shortly.",
        error: describeError(err),
        retryable: true,
        messages: [{ role: "user", content: job.input.text }],
      });
    });
  }

  private onQueueEvent(event: QueueEvent): void {
    switch (event.type) {
      case "progress": {
        const key = this.activeByTurn.get(event.jobId);
        const active = key ? this.active.get(key) : undefined;
        if (!active) return;
        const p = event.progress;
        if (p.type === "tool-start")
          active.feedback?.toolLine(`⚙️ ${p.name}${p.summary ? `: ${p.summary}` : ""}`);
        else if (p.type === "text-delta") this.streamDelta(event.jobId, p.text);
        return;
      }
      case "completed":
        this.commit(event.jobId, event.result);
        return;
      case "failed":
        this.commit(event.jobId, {
          kind: "failed",
          turnId: event.jobId,
          userMessage: "Something went wrong while working on that; please try again.",
          error: event.error,
          retryable: event.retryable,
          messages: [],
        });
        return;
    }
  }

  private streamDelta(turnId: string, text: string): void {
    const key = this.activeByTurn.get(turnId);
    const turn = key ? this.active.get(key)?.turn : undefined;
    if (!turn?.inbound) return;
    this.adapters
      .get(turn.chat.platform)
      ?.onTurnEvent?.(turn.chat, { type: "delta", replyToId: turn.inbound.messageId, text });
  }

  /** Records a turn's result and queues its reply; a result for a turn already final is stale and dropped. */
  private commit(turnId: string, result: TurnResult): void {
    const { state } = this.options;
    const activeKey = this.activeByTurn.get(turnId);
    const turn = (activeKey ? this.active.get(activeKey)?.turn : undefined) ?? state.turns.get(turnId);
    if (!turn || !["pending", "running"].includes(turn.status)) return;
    const items: OutboxItem[] = [];
    const effects: Effect[] = [];
    const committed = state.transaction(() => {
      const ok = result.kind === "ok";
      if (!state.turns.finish(turnId, ok ? "done" : "failed", ok ? undefined : result.error, this.now()))
        return false;
      if (result.kind === "ok" && result.compaction) {
        const stored = state.sessions.load(turn.sessionId);
        const last = stored[result.compaction.replacedCount - 1];
        if (last) state.sessions.compact(turn.sessionId, last.seq, result.compaction.summary);
      }
      if (result.messages.length)
        state.sessions.append(turn.sessionId, result.messages, { turnId, now: this.now() });
      const replyToId = turn.inbound ? (turn.inbound.replyToId ?? turn.inbound.messageId) : undefined;
      if (result.kind === "ok") {
        const text = result.reply.text.trim();
        const silent = text === "[SILENT]" || (!text && !result.reply.files?.length);
        const targets = (turn.extra?.["deliverTo"] as ChatRef[] | undefined) ?? [turn.chat];
        if (!silent) {
          for (const target of targets) {
            const same = formatChat(target) === formatChat(turn.chat);
            items.push(
              state.outbox.add(
                target,
                {
                  text: result.reply.text,
                  files: result.reply.files,
                  replyToId: same ? replyToId : undefined,
                  inboundMeta: same ? turn.inbound?.meta : undefined,
                  subject: turn.extra?.["subject"] as string | undefined,
                },
                turnId,
                this.now(),
              ),
            );
          }
        }
        if (turn.chat.threadId) this.engaged.set(turn.sessionKey, String(this.now()));
      } else {
        this.log.warn({ turnId, error: result.error }, "turn failed");
        items.push(
          state.outbox.add(
            turn.chat,
            { text: result.userMessage, kind: "error", replyToId, inboundMeta: turn.inbound?.meta },
            turnId,
            this.now(),
          ),
        );
      }
      this.release(turn.sessionKey, turnId);
      this.claimNext(turn.sessionKey, effects);
      return true;
    });
    if (!committed) return;
    this.afterCommit([
      ...items.map((item) => () => this.outbox.deliver(item)),
      () => {
        for (const listener of this.turnFinished) listener(turn, result);
      },
      ...effects,
    ]);
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
    this.log.warn({ error: describeError(err) }, msg);
  }
}

function isWellFormed(message: InboundMessage): boolean {
  return (
    typeof message === "object" &&
    message !== null &&
    typeof message.platform === "string" &&
    typeof message.messageId === "string" &&
    message.messageId.length > 0 &&
    typeof message.chat?.chatId === "string" &&
    typeof message.sender?.id === "string" &&
    typeof message.text === "string"
  );
}
