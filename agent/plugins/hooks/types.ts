/**
 * Hooks: observers and filters at fixed points of a message's way through Herald. Plugins declare
 * them (`definePlugin({ hooks })`); the {@link HookRunner} runs them with a time limit and contains
 * their errors. A hook that throws or runs out of time counts as "no change" and is logged.
 */
import type { Logger } from "../../../core/logger.js";

/** Where a message or turn comes from, as hooks see it. */
export interface HookOrigin {
  platform: string;
  chatId: string;
  threadId?: string | undefined;
  chatType: "dm" | "group";
  userId: string;
  /** The session key (`platform:chat…`); absent for an inbound message not yet in a session. */
  sessionKey?: string | undefined;
}

/** An inbound message from an allowed user, before the gateway decides on it (commands excluded). */
export interface InboundHookEvent {
  origin: HookOrigin;
  text: string;
  userName?: string | undefined;
}

/** Drop the message (no turn, no reply), rewrite its text, or return nothing to let it pass. */
export type InboundHookResult = { drop: true; reason?: string } | { text: string } | undefined;

/** A tool call the model asked for, before it runs. `args` are the model's arguments, parsed. */
export interface ToolCallHookEvent {
  tool: string;
  args: unknown;
  origin: HookOrigin;
}

/** Block the call with a reason the model reads, or return nothing to let it run. */
export type BeforeToolCallResult = { block: string } | undefined;

/** A tool call and its result. */
export interface ToolResultHookEvent extends ToolCallHookEvent {
  result: { content: string; isError: boolean };
}

/** Replace the result's text the model reads, or return nothing to keep it. */
export type AfterToolCallResult = { content: string } | undefined;

/** The reply of a turn, before it is stored and sent. */
export interface ReplyHookEvent {
  text: string;
  origin: HookOrigin;
}

/** Rewrite the reply, or return nothing to keep it. */
export type BeforeReplyResult = { text: string } | undefined;

/** A turn whose result was committed. */
export interface TurnFinishedHookEvent {
  turnId: string;
  origin: HookOrigin;
  outcome: "ok" | "failed";
  /** The reply text (an `ok` turn). */
  reply?: string | undefined;
}

/** What every hook gets besides its event: aborted when its time limit is up. */
export interface HookContext {
  signal: AbortSignal;
  logger: Logger;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * A plugin's hooks. Each may be async, may throw (logged, counts as no change) and must finish within
 * `plugins.hook_timeout_ms` (else it counts as no change; `ctx.signal` aborts).
 */
export interface Hooks {
  /** An inbound message from an allowed user (not a slash command): drop it, rewrite it, or pass. */
  inbound?(event: InboundHookEvent, ctx: HookContext): MaybePromise<InboundHookResult>;
  /** Before a tool runs: block it with a reason the model sees, or pass. */
  beforeToolCall?(event: ToolCallHookEvent, ctx: HookContext): MaybePromise<BeforeToolCallResult>;
  /** After a tool ran: observe, or replace the text the model reads. */
  afterToolCall?(event: ToolResultHookEvent, ctx: HookContext): MaybePromise<AfterToolCallResult>;
  /** Before the reply is stored and sent: rewrite it, or pass. */
  beforeReply?(event: ReplyHookEvent, ctx: HookContext): MaybePromise<BeforeReplyResult>;
  /** After a turn's result was committed: observe only. */
  turnFinished?(event: TurnFinishedHookEvent, ctx: HookContext): MaybePromise<void>;
}

/** The names of the hook points. */
export type HookPoint = keyof Hooks;

/** The hook points in the order a turn meets them. */
export const HOOK_POINTS: readonly HookPoint[] = [
  "inbound",
  "beforeToolCall",
  "afterToolCall",
  "beforeReply",
  "turnFinished",
];

/** One owner's hooks (a plugin's), named for logs. */
export interface NamedHooks {
  name: string;
  hooks: Hooks;
}
