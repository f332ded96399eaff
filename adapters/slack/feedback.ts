/**
 * The visible sign that Herald is working, in Slack terms: a reaction (👀 by default) on the user's
 * message while the turn runs. Slack bots have no typing indicator outside assistant threads, and the
 * gateway's `sendTyping(chat)` names only the chat, so the adapter remembers the last accepted message
 * per chat, reacts to it on the first `sendTyping` of the turn (later calls, every ~4 s, change nothing),
 * and removes the reaction when the reply to it is sent, or when `sendTyping` has stopped coming for a
 * while (a turn that ended without a reply: cancelled, failed quietly). Best-effort: never throws.
 */
import { formatChat } from "../../core/chat.js";
import { describeError, type PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChatRef } from "../../core/types.js";
import type { SlackApi } from "./api.js";

interface ChatState {
  chat: ChatRef;
  /** The latest accepted message not reacted to yet. */
  pending?: string | undefined;
  /** Messages carrying the reaction now. */
  reacted: Set<string>;
  idle?: NodeJS.Timeout | undefined;
}

export interface ReactionFeedbackOptions {
  /** Reaction name without colons. */
  reaction: string;
  /** No `sendTyping` for this long: the turn is over, remove the reaction. @defaultValue 15000 */
  idleMs?: number | undefined;
  /** Chats tracked at most (oldest forgotten first). @defaultValue 1000 */
  maxChats?: number;
}

export class ReactionFeedback {
  private readonly chats = new Map<string, ChatState>();
  private warnedScope = false;

  constructor(
    private readonly api: SlackApi,
    private readonly logger: Logger,
    private readonly options: ReactionFeedbackOptions,
  ) {}

  /**
   * An inbound message about to be handed to the gateway: the next turn in `chat` answers it. Noted
   * before the gateway's answer, as its turn may start (and call `sendTyping`) before that answer.
   */
  noted(chat: ChatRef, ts: string): void {
    const key = formatChat(chat);
    const state = this.chats.get(key) ?? { chat, reacted: new Set<string>() };
    state.pending = ts;
    this.chats.delete(key); // re-insert: most recent last
    this.chats.set(key, state);
    while (this.chats.size > (this.options.maxChats ?? 1000)) {
      const [oldest, old] = this.chats.entries().next().value as [string, ChatState];
      clearTimeout(old.idle);
      this.chats.delete(oldest);
    }
  }

  /** The message turned out not to start a turn (duplicate, command, ignored): forget it. */
  unnoted(chat: ChatRef, ts: string): void {
    const key = formatChat(chat);
    const state = this.chats.get(key);
    if (!state || state.pending !== ts) return;
    state.pending = undefined;
    if (state.reacted.size === 0) this.chats.delete(key);
  }

  /** The gateway's typing tick: react once per turn, keep the idle timer alive. */
  async typing(chat: ChatRef): Promise<void> {
    const state = this.chats.get(formatChat(chat));
    if (!state) return;
    this.armIdle(state);
    const ts = state.pending;
    if (!ts || state.reacted.has(ts)) return;
    state.pending = undefined;
    state.reacted.add(ts);
    await this.react("reactions.add", chat, ts);
  }

  /** A reply went out: remove the reaction from `replyToId`, or from every message in the chat. */
  async replied(chat: ChatRef, replyToId: string | undefined): Promise<void> {
    const key = formatChat(chat);
    const state = this.chats.get(key);
    if (!state) return;
    const targets = replyToId ? (state.reacted.has(replyToId) ? [replyToId] : []) : [...state.reacted];
    for (const ts of targets) state.reacted.delete(ts);
    if (state.reacted.size === 0) {
      clearTimeout(state.idle);
      state.idle = undefined;
      if (!state.pending) this.chats.delete(key);
    }
    for (const ts of targets) await this.react("reactions.remove", chat, ts);
  }

  /** Forgets everything (adapter stop). Reactions already shown stay. */
  stop(): void {
    for (const state of this.chats.values()) clearTimeout(state.idle);
    this.chats.clear();
  }

  private armIdle(state: ChatState): void {
    clearTimeout(state.idle);
    state.idle = setTimeout(() => {
      state.idle = undefined;
      void this.replied(state.chat, undefined);
    }, this.options.idleMs ?? 15_000);
    state.idle.unref?.();
  }

  private async react(
    method: "reactions.add" | "reactions.remove",
    chat: ChatRef,
    ts: string,
  ): Promise<void> {
    try {
      await this.api.call(
        method,
        { channel: chat.chatId, timestamp: ts, name: this.options.reaction },
        chat.chatId,
      );
    } catch (err) {
      const message = describeError(err);
      // Already there / already gone: the state we wanted.
      if (/already_reacted|no_reaction|message_not_found/.test(message)) return;
      if ((err as PlatformError).code === "platform_auth_failed" && !this.warnedScope) {
        this.warnedScope = true;
        this.logger.warn({ error: message }, "slack working reaction unavailable");
        return;
      }
      this.logger.debug({ method, error: message }, "slack working reaction failed");
    }
  }
}
