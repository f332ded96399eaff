/**
 * The inbound path as a pipeline of small synchronous steps: dedupe → gate → authorize → command →
 * admit input → open session → busy policy → create turn. Each step reads the message and what earlier
 * steps decided, and either ends the pipeline with an outcome or passes on. The steps run inside the
 * inbound transaction; what must wait for its commit goes into `ctx.effects`. They see state only
 * through the narrow ports of {@link InboundDeps}, so each is testable alone with plain objects.
 */

import type { CommandContext, CommandResult, DeferredAnswer } from "../core/commands.js";
import { parseCommand } from "../core/commands.js";
import type { Logger } from "../core/logger.js";
import { attribute, isSharedGroup } from "../core/speakers.js";
import type { NewTurn, TurnRecord, TurnResume } from "../core/turn.js";
import type { ChatMessage, InboundMessage, InboundOutcome, OutboundMessage } from "../core/types.js";
import type {
  InboundLedger,
  OpenedSession,
  PairingStore,
  SessionStore,
  TurnJournal,
} from "../sessions/types.js";
import { type AccessDecision, pairingText } from "./access.js";
import type { Effect, EndedSession, RunnerSettings } from "./types.js";

/** What the steps may read and do. */
export interface InboundDeps {
  settings: Pick<RunnerSettings, "timezone" | "sessions" | "platforms">;
  ledger: Pick<InboundLedger, "record">;
  /** Threads where the bot already answered, by session key. */
  engaged: { get(sessionKey: string): string | undefined };
  access: {
    decide(message: InboundMessage): AccessDecision;
    /** Whether the sender is an owner (commands' `isOwner`). @defaultValue nobody */
    isOwner?(platform: string, userId: string): boolean;
  };
  pairing: Pick<PairingStore, "issue">;
  commands: { resolve(name: string, ctx: CommandContext): CommandResult | undefined };
  sessions: Pick<SessionStore, "open" | "append">;
  turns: Pick<TurnJournal, "get" | "create">;
  /** Labels of the people in shared group sessions (`SpeakerRoster`); writes with the transaction. */
  speakers: { label(sessionId: string, platform: string, sender: InboundMessage["sender"]): string };
  /** Queues a reply to `message` in the outbox; its delivery goes into `effects`. */
  reply(message: InboundMessage, text: string, kind: OutboundMessage["kind"], effects: Effect[]): void;
  /** Cancels the open turns of a key (see `TurnControl.cancel`); side effects into `effects`. */
  cancel(sessionKey: string, reason: string, effects: Effect[], keepInput: boolean): number;
  /**
   * Runs a command's deferred answer (call it as an effect) and queues its text as the reply to
   * `message` when it settles.
   */
  answerLater(message: InboundMessage, answer: DeferredAnswer["answer"]): void;
  /** Tells the runner's `session-ended` handlers (call it as an effect). */
  sessionEnded(session: EndedSession): void;
  /** Journals the turn through `create` (running when it is claimed at once) and claims the key's next turn. */
  claim(sessionKey: string, effects: Effect[], create: (running: boolean) => TurnRecord): void;
  /** The turn id of an inbound message (deterministic: a redelivery maps to the same turn). */
  turnId(message: InboundMessage): string;
  log: Logger;
}

/** What the steps share while deciding one message. */
export interface InboundContext {
  message: InboundMessage;
  /** The agent that answers it (undefined: the default agent); part of `sessionKey`. */
  agent?: string | undefined;
  sessionKey: string;
  now: number;
  /** The turn's input: the message's text, or what a command turned it into. */
  input: string;
  /** `input` is a stored user message answered again (`/retry`): it is not attributed again. */
  replay?: boolean | undefined;
  /** The turn resumes a held call (`/approve`, `/deny`): see `TurnResume`. */
  resume?: TurnResume | undefined;
  opened?: OpenedSession | undefined;
  /** The message is in the inbound ledger (recorded by `dedupe`, or replayed from it). */
  recorded: boolean;
  effects: Effect[];
}

/** One step: an outcome ends the pipeline, undefined passes on. */
export type InboundStep = (ctx: InboundContext, deps: InboundDeps) => InboundOutcome | undefined;

/** A message already recorded (replayed at start) is not recorded again. */
export const dedupe: InboundStep = (ctx, deps) => {
  if (!deps.ledger.record(ctx.message, ctx.now)) return "duplicate";
  ctx.recorded = true;
  return undefined;
};

/**
 * The one mention-gating rule: in groups the bot answers when addressed, when the platform's
 * require-mention is off, or in a thread where it already answered.
 */
export function isAddressed(
  message: InboundMessage,
  sessionKey: string,
  deps: { settings: Pick<RunnerSettings, "platforms">; engaged: InboundDeps["engaged"] },
): boolean {
  if (message.chatType !== "group" || message.mentioned) return true;
  if (deps.settings.platforms[message.platform]?.requireMention === false) return true;
  return message.chat.threadId !== undefined && deps.engaged.get(sessionKey) !== undefined;
}

export const gate: InboundStep = ({ message, sessionKey }, deps) =>
  isAddressed(message, sessionKey, deps) ? undefined : "ignored";

export const authorize: InboundStep = ({ message, now, effects }, deps) => {
  const access = deps.access.decide(message);
  if (access === "allowed") return undefined;
  if (access === "denied") return "unauthorized";
  const issued = deps.pairing.issue(
    {
      platform: message.platform,
      userId: message.sender.id,
      userName: message.sender.name,
      chatId: message.chat.chatId,
    },
    now,
  );
  if ("limited" in issued) return "unauthorized";
  deps.reply(message, pairingText(issued.code, issued.expiresAt, now), "notice", effects);
  deps.log.info({ platform: message.platform, userId: message.sender.id }, "pairing code issued");
  return "pairing";
};

export const command: InboundStep = (ctx, deps) => {
  const parsed = parseCommand(ctx.message.text);
  if (!parsed) return undefined;
  const result = deps.commands.resolve(parsed.name, {
    message: ctx.message,
    args: parsed.args,
    sessionKey: ctx.sessionKey,
    now: ctx.now,
    isOwner: deps.access.isOwner?.(ctx.message.platform, ctx.message.sender.id) ?? false,
  });
  if (result === undefined) return undefined;
  if (typeof result === "object" && "answer" in result) {
    deps.reply(ctx.message, result.notice, "notice", ctx.effects);
    const { message } = ctx;
    ctx.effects.push(() => deps.answerLater(message, result.answer));
    return "command";
  }
  if (typeof result === "object" && "turnInput" in result) {
    // A command that starts a turn (`/<skill> args`, `/retry`): its text is the turn's input.
    ctx.input = result.turnInput;
    ctx.replay = result.replay === true;
    ctx.resume = result.resume;
    if (result.after) ctx.effects.push(result.after);
    return undefined;
  }
  const { reply, after } = typeof result === "string" ? { reply: result, after: undefined } : result;
  deps.reply(ctx.message, reply, "reply", ctx.effects);
  if (after) ctx.effects.push(after);
  return "command";
};

/** Nothing to answer: no text, no files and no client tool outputs. */
export const admitInput: InboundStep = ({ input, message }) =>
  input.trim() || message.attachments?.length || message.clientResults?.outputs.length
    ? undefined
    : "ignored";

export const openSession: InboundStep = (ctx, deps) => {
  const { message, now, sessionKey } = ctx;
  const { reset } = deps.settings.sessions;
  const opened = deps.sessions.open(
    { chat: message.chat, chatType: message.chatType, userId: message.sender.id, agent: ctx.agent },
    { ...reset, timezone: deps.settings.timezone },
    now,
  );
  ctx.opened = opened;
  if (opened.autoReset) {
    const why = opened.autoReset.reason === "idle" ? "after a quiet spell" : "for the new day";
    const text = `_Started a fresh session ${why}. Earlier chats stay searchable._`;
    deps.reply(message, text, "notice", ctx.effects);
    const ended = {
      id: opened.autoReset.previousSessionId,
      key: sessionKey,
      reason: opened.autoReset.reason,
    };
    ctx.effects.push(() => deps.sessionEnded(ended));
  }
  if (message.context?.length && opened.session.messageCount === 0) {
    deps.sessions.append(opened.session.id, message.context as ChatMessage[], { now });
  }
  return undefined;
};

/** A newer message interrupts the session's running turn (the API's requests queue instead). */
export const busyPolicy: InboundStep = ({ message, sessionKey, effects }, deps) => {
  const policy = message.platform === "api" ? "queue" : deps.settings.sessions.busyPolicy;
  if (policy === "interrupt") deps.cancel(sessionKey, "interrupted by a newer message", effects, true);
  return undefined;
};

/**
 * Journals the turn. In a shared group session its input is attributed here, once: the stored text and
 * everything built from it (the job, a cancelled turn's kept input, a failure's user message) carry the
 * sender's tag, and a redelivery, a queue retry or a restart reuses the journalled input as it is.
 */
export const createTurn: InboundStep = (ctx, deps) => {
  const { message, sessionKey, opened } = ctx;
  if (!opened) throw new Error("createTurn runs after openSession");
  const id = deps.turnId(message);
  if (deps.turns.get(id)) return "duplicate";
  const shared = isSharedGroup(message.chatType, deps.settings.sessions.groupSessions);
  const input =
    shared && !ctx.replay
      ? attribute(ctx.input, deps.speakers.label(opened.session.id, message.platform, message.sender))
      : ctx.input;
  const turn: NewTurn = {
    id,
    sessionId: opened.session.id,
    sessionKey,
    chat: message.chat,
    userId: message.sender.id,
    source: message.platform === "api" ? "api" : "chat",
    input,
    inbound: message,
    ...(ctx.resume ? { resume: ctx.resume } : {}),
  };
  deps.claim(sessionKey, ctx.effects, (running) => deps.turns.create(turn, ctx.now, { running }));
  return "accepted";
};

/** The steps in order. */
export const inboundSteps: readonly InboundStep[] = [
  dedupe,
  gate,
  authorize,
  command,
  admitInput,
  openSession,
  busyPolicy,
  createTurn,
];

/** Runs `steps` until one decides; a message every step passed is accepted. */
export function decideInbound(
  ctx: InboundContext,
  deps: InboundDeps,
  steps: readonly InboundStep[] = inboundSteps,
): InboundOutcome {
  for (const step of steps) {
    const outcome = step(ctx, deps);
    if (outcome !== undefined) return outcome;
  }
  return "accepted";
}

/** Whether an adapter handed over something shaped like an `InboundMessage` (a malformed one is skipped). */
export function isWellFormed(message: InboundMessage): boolean {
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
