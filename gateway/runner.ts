/**
 * The GatewayRunner: every inbound message goes through the inbound steps (gateway/inbound.ts) in one
 * SQLite transaction, and every turn goes journal → queue → worker → result → session + outbox through
 * the turn coordinator (gateway/turns.ts), in one more. Side effects (enqueue, cancel, deliver) run after
 * the transaction commits, so a crash at any point leaves state that `start()` finishes: open turns run
 * again (a turn that was running at two crashes is failed instead), undelivered replies go out, once.
 * Commands and the scheduler reach turns through `control` (gateway/turn-control.ts). Features hear
 * what happened through one event stream, `on(type, handler)`, and answer the runner's three questions
 * (`addStopper`, `addTaskStopper`, `addStatusLine`); see gateway/runner-events.ts.
 */

import { createHash } from "node:crypto";
import { sessionKey } from "../core/chat.js";
import { type DeferredAnswer, parseCommand } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue, TurnControl } from "../core/turn.js";
import type {
  InboundMessage,
  InboundOutcome,
  KeyValueStore,
  OutboundMessage,
  PlatformAdapter,
} from "../core/types.js";
import { AccessPolicy, type UserIdNormalisers } from "./access.js";
import { ButtonPrompts } from "./button-prompts.js";
import { CommandRegistry } from "./commands.js";
import { coreCommands } from "./core-commands.js";
import { crashedTurnResult, crashedTurnsToFail } from "./crashed-turns.js";
import {
  decideInbound,
  type InboundContext,
  type InboundDeps,
  inboundSteps,
  isAddressed,
  isWellFormed,
} from "./inbound.js";
import { OutboxDispatcher } from "./outbox-dispatcher.js";
import {
  type RunnerEventHandler,
  RunnerEvents,
  type RunnerEventType,
  RunnerHooks,
  type StatusLine,
  type Stopper,
  type TaskStopper,
} from "./runner-events.js";
import { type CompressSession, sessionCommands } from "./session-commands.js";
import { SpeakerRoster } from "./speakers.js";
import { createTurnControl } from "./turn-control.js";
import { defaultContext, TurnCoordinator } from "./turns.js";
import type {
  Effect,
  EndedSession,
  InboundHook,
  RunnerSettings,
  RunnerState,
  TurnContextSource,
} from "./types.js";
import { UnitOfWork } from "./work.js";

export interface GatewayRunnerOptions {
  config: RunnerSettings;
  state: RunnerState;
  queue: JobQueue;
  logger: Logger;
  /**
   * Builds a turn's history, system prompt and toolsets. @defaultValue the session's history, a short
   * generic prompt, the platform's or default toolsets
   */
  context?: TurnContextSource | undefined;
  /** How each platform's user ids compare in allowlists (from the platform modules). */
  userIds?: UserIdNormalisers | undefined;
  /** The model named by `/status` (a function: the session key's own). */
  modelName?: string | ((sessionKey: string) => string) | undefined;
  /**
   * The agent that answers a message (`agents:` and `routes:`, a chat's `/agent` choice); undefined for
   * the default agent. Its name prefixes the message's session key. @defaultValue the default agent
   */
  agentOf?: ((message: InboundMessage) => string | undefined) | undefined;
  /** `/compress`'s compressor (a model call); without it /compress says it is unavailable. */
  compress?: CompressSession | undefined;
  /** Plugins' inbound hooks: may drop or rewrite a message of an allowed user. @defaultValue none */
  inboundHook?: InboundHook | undefined;
  /**
   * This process runs the turns (the embedded queue), so a turn found running at start was cut short
   * by this process's own end: it runs once more, and is failed after a second such end
   * (gateway/crashed-turns.ts). False where workers run them (Redis: BullMQ limits a dead worker's
   * job). @defaultValue true
   */
  turnsRunHere?: boolean | undefined;
  now?: () => number;
}

/** Deterministic, colon-free turn id of an inbound message: a redelivery maps to the same turn. */
export function turnIdFor(platform: string, messageId: string): string {
  return `t${createHash("sha256").update(`${platform}\u0000${messageId}`).digest("hex").slice(0, 24)}`;
}

export type { EndedSession, RunnerEvent } from "./types.js";

export class GatewayRunner {
  readonly adapters = new Map<string, PlatformAdapter>();
  readonly commands = new CommandRegistry();
  readonly access: AccessPolicy;
  readonly outbox: OutboxDispatcher;
  /** What commands and the scheduler may do to turns and sessions. */
  readonly control: TurnControl;
  /** Delivered prompts with buttons: settle one answered without a click (approvals). */
  readonly prompts: ButtonPrompts;
  private readonly events: RunnerEvents;
  private readonly hooks = new RunnerHooks();
  private readonly turns: TurnCoordinator;
  private readonly work: UnitOfWork;
  private readonly inbound: InboundDeps;
  private unsubscribe: (() => void) | undefined;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly options: GatewayRunnerOptions) {
    const { state, config } = options;
    this.now = options.now ?? Date.now;
    this.log = options.logger.child({ component: "runner" });
    this.events = new RunnerEvents(this.log);
    this.access = new AccessPolicy(config, state.pairing, options.userIds);
    this.work = new UnitOfWork(state);
    const engaged = state.kv("engaged-threads");
    this.prompts = new ButtonPrompts(state.kv("button-prompts"), this.adapters, this.log);
    this.outbox = new OutboxDispatcher({
      outbox: state.outbox,
      transaction: (record) => state.transaction(record),
      adapters: this.adapters,
      logger: options.logger.child({ component: "outbox" }),
      onSettled: (item, outcome, messageIds) => {
        if (outcome === "delivered") this.prompts.record(item, messageIds);
        this.events.emit({ type: "delivery-settled", item, outcome });
      },
    });
    this.turns = new TurnCoordinator({
      state,
      queue: options.queue,
      work: this.work,
      settings: config,
      context: options.context ?? defaultContext(state, config),
      adapters: this.adapters,
      outbox: this.outbox,
      emit: (event) => this.events.emit(event),
      engaged,
      logger: this.log,
      now: this.now,
    });
    this.inbound = this.inboundDeps(engaged);
    this.control = createTurnControl({
      state,
      work: this.work,
      turns: this.turns,
      outbox: this.outbox,
      adapters: this.adapters,
      sessionEnded: (ended) => this.endedSession(ended),
      now: this.now,
    });
    this.commands.add(
      coreCommands({
        onStop: (key) => this.hooks.stop(key),
        onStopTask: (id, key) => this.hooks.stopTask(id, key),
        control: this.control,
        sessions: state.sessions,
        commands: this.commands,
        modelName: options.modelName,
        statusLines: () => this.hooks.statusLines(),
      }),
    );
    this.commands.add(
      sessionCommands({
        control: this.control,
        sessions: state.sessions,
        sessionEnded: (ended) => this.endedSession(ended),
        compress: options.compress,
        now: this.now,
      }),
    );
  }

  /** The inbound steps' ports, on this runner's state. */
  private inboundDeps(engaged: KeyValueStore): InboundDeps {
    const { state, config } = this.options;
    return {
      settings: config,
      ledger: state.ledger,
      engaged,
      access: this.access,
      pairing: state.pairing,
      commands: this.commands,
      sessions: state.sessions,
      turns: state.turns,
      speakers: new SpeakerRoster(state.kv("speakers")),
      reply: (message, text, kind, effects) => this.reply(message, text, kind, effects),
      cancel: (key, reason, effects, keepInput) => this.turns.cancel(key, reason, effects, keepInput),
      sessionEnded: (ended) => this.endedSession(ended),
      answerLater: (message, answer) => this.answerLater(message, answer),
      claim: (key, effects, create) => void this.turns.claimNew(key, effects, create),
      turnId: (message) => turnIdFor(message.platform, message.messageId),
      log: this.log,
    };
  }

  get state(): RunnerState {
    return this.options.state;
  }

  /**
   * Calls `handler` with every event tagged `type` (see `RunnerEvent`) from now on; returns its
   * unsubscribe. A handler must not throw: a throw is logged and the others still hear.
   */
  on<T extends RunnerEventType>(type: T, handler: RunnerEventHandler<T>): () => void {
    return this.events.on(type, handler);
  }

  /**
   * Adds what `/stop` also stops besides the session's turns (a pending approval request): it returns
   * how many things it stopped. Runs inside the inbound transaction; must not throw. Returns its removal.
   */
  addStopper(stopper: Stopper): () => void {
    return this.hooks.addStopper(stopper);
  }

  /** Adds an answer to `/stop <id>` (background tasks): the first that knows the id wins. Must not throw. */
  addTaskStopper(stopper: TaskStopper): () => void {
    return this.hooks.addTaskStopper(stopper);
  }

  /** Adds a line to `/status` (loaded plugins). Must not throw. Returns its removal. */
  addStatusLine(line: StatusLine): () => void {
    return this.hooks.addStatusLine(line);
  }

  /** Adds a platform adapter (before or after start). */
  addAdapter(adapter: PlatformAdapter): void {
    this.adapters.set(adapter.platform, adapter);
  }

  /** Subscribes to the queue and finishes what a previous process left: inbound, turns, replies. */
  start(): void {
    const { state, queue } = this.options;
    this.unsubscribe = queue.subscribe(this.turns.onQueueEvent);
    for (const message of state.ledger.unhandled()) {
      this.work.run((effects) => {
        // Already recorded: every step but the dedupe.
        const outcome = decideInbound(
          this.contextOf(message, effects, true),
          this.inbound,
          inboundSteps.slice(1),
        );
        state.ledger.markHandled(message.platform, message.messageId, outcome);
      });
    }
    let requeued: number;
    if (this.options.turnsRunHere ?? true) {
      const crashed = state.turns.requeueCrashed();
      requeued = crashed.length;
      for (const turn of crashedTurnsToFail(crashed, this.log))
        this.turns.commit(turn.id, crashedTurnResult(turn.id, "the process ended during this turn twice"));
    } else requeued = state.turns.requeueRunning();
    const keys = new Set(state.turns.allOpen().map((t) => t.sessionKey));
    if (requeued || keys.size) this.log.info({ requeued, sessions: keys.size }, "resuming open turns");
    for (const key of keys) this.turns.dispatch(key);
    this.outbox.resume();
  }

  /**
   * Stops feedback loops and delivery; open turns stay in the journal for the next start, and the ones
   * running are handed back uncounted (a clean stop is not a crash).
   */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.outbox.stop();
    const running = this.turns.runningTurnIds();
    await this.turns.stop();
    try {
      if (running.length) this.work.run(() => this.options.state.turns.handBack(running));
    } catch (err) {
      // The next start then counts their run as a crash: at worst one of them is failed early.
      this.log.warn(
        { error: describeError(err), turns: running.length },
        "could not hand back running turns",
      );
    }
  }

  /** The InboundHandler adapters call. Resolves once the message is recorded and decided, durably. */
  readonly handleInbound = async (received: InboundMessage): Promise<InboundOutcome> => {
    if (!isWellFormed(received)) {
      this.log.warn(
        { platform: (received as Partial<InboundMessage>)?.platform },
        "malformed inbound message skipped",
      );
      return "malformed";
    }
    const message = this.options.inboundHook?.active() ? await this.hooked(received) : received;
    if (!message) return "ignored";
    const { state } = this.options;
    const outcome = this.work.run((effects) => {
      const ctx = this.contextOf(message, effects, false);
      const decided = decideInbound(ctx, this.inbound);
      if (ctx.recorded) state.ledger.markHandled(message.platform, message.messageId, decided);
      return decided;
    });
    await state.committed();
    return outcome;
  };

  /** The message after the inbound hook; only allowed users' non-command messages reach it. */
  private async hooked(message: InboundMessage): Promise<InboundMessage | undefined> {
    const hook = this.options.inboundHook;
    if (!hook || parseCommand(message.text) || this.access.decide(message) !== "allowed") return message;
    return hook.run(message);
  }

  /** Whether the gateway would answer `message` by the mention-gating rule (adapters skip other work). */
  isAddressed(message: InboundMessage): boolean {
    return isAddressed(message, this.keyOf(message), this.inbound);
  }

  /** The session key of a message's sender with its agent (`agent`: another agent than the routed one). */
  keyOf(message: InboundMessage, agent: string | undefined = this.options.agentOf?.(message)): string {
    return sessionKey(
      { chat: message.chat, chatType: message.chatType, userId: message.sender.id, agent },
      this.options.config.sessions.groupSessions,
    );
  }

  /** Tells the `session-ended` handlers (call after the reset committed). */
  private endedSession(session: EndedSession): void {
    this.events.emit({ type: "session-ended", session });
  }

  private contextOf(message: InboundMessage, effects: Effect[], recorded: boolean): InboundContext {
    const agent = this.options.agentOf?.(message);
    return {
      message,
      agent,
      sessionKey: this.keyOf(message, agent),
      now: this.now(),
      input: message.text,
      recorded,
      effects,
    };
  }

  /**
   * Runs a command's deferred answer; its text (with its buttons) or a failure notice becomes the reply
   * to `message`.
   */
  private answerLater(message: InboundMessage, answer: DeferredAnswer["answer"]): void {
    const settle = (answered: Awaited<ReturnType<DeferredAnswer["answer"]>>) => {
      const { reply, buttons } =
        typeof answered === "string" ? { reply: answered, buttons: undefined } : answered;
      this.work.run((effects) => this.reply(message, reply, "reply", effects, buttons));
    };
    let pending: ReturnType<DeferredAnswer["answer"]>;
    try {
      pending = answer();
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(settle, (err: unknown) => {
      this.log.error({ error: describeError(err) }, "a command's deferred answer failed");
      settle("That didn't work; the details are in the gateway log.");
    });
  }

  /** Queues a reply to `message` in the outbox (inside the current transaction), delivered after commit. */
  private reply(
    message: InboundMessage,
    text: string,
    kind: OutboundMessage["kind"],
    effects: Effect[],
    buttons?: OutboundMessage["buttons"],
  ): void {
    const item = this.options.state.outbox.add(message.chat, {
      text,
      kind,
      replyToId: message.replyToId ?? message.messageId,
      inboundMeta: message.meta,
      ...(buttons?.length ? { buttons } : {}),
    });
    effects.push(() => this.outbox.deliver(item));
  }
}
