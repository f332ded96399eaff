/**
 * The prompts with buttons the gateway delivered, so one answered without a click (typed `/approve`,
 * a request that lapsed or was cancelled) loses its buttons too. A click is settled by the adapter
 * itself (it edits the prompt to "✓ <label>" as the click comes in); everything else comes here.
 *
 * Kept in the state's key-value store per chat, newest last, at most `MAX_PER_CHAT` of them: a prompt
 * nobody settles (a question answered in other words) falls off the end instead of piling up.
 */
import { formatChat } from "../core/chat.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { ChatRef, KeyValueStore, PlatformAdapter, PlatformName } from "../core/types.js";
import type { OutboxItem } from "../sessions/types.js";

/** Prompts remembered per chat. */
const MAX_PER_CHAT = 20;

interface PromptRecord {
  /** The platform message the buttons are under (the last chunk). */
  messageId: string;
  /** The prompt's text as sent (markdown). */
  text: string;
  /** What each of its buttons sends. */
  data: string[];
}

/** An answer that came before its prompt's delivery was recorded: applied when it is. */
interface EarlyAnswer {
  data: string;
  note: string;
  edit: boolean;
  /** Epoch ms: forgotten after `EARLY_TTL_MS`. */
  at: number;
}

interface ChatPrompts {
  prompts: PromptRecord[];
  early: EarlyAnswer[];
}

/** How long an answer waits for its prompt's delivery to be recorded. */
const EARLY_TTL_MS = 10 * 60_000;

/** Remembers delivered prompts with buttons and settles them on request. */
export class ButtonPrompts {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly adapters: ReadonlyMap<PlatformName, PlatformAdapter>,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records `item` if it carried buttons (call when the platform confirmed it). Never throws. */
  record(item: OutboxItem, messageIds: readonly string[]): void {
    const data = (item.message.buttons ?? []).flat().map((b) => b.data);
    const messageId = messageIds.at(-1);
    if (data.length === 0 || messageId === undefined || !this.canSettle(item.chat)) return;
    const key = formatChat(item.chat);
    const stored = this.read(key);
    const prompt = { messageId, text: item.message.text, data };
    // Answered while its delivery was being confirmed (a fast typist, a lapse during retries).
    const early = stored.early.find((a) => data.includes(a.data));
    stored.prompts = stored.prompts.filter((p) => !p.data.some((d) => data.includes(d)));
    stored.early = stored.early.filter((a) => a !== early);
    if (!early) stored.prompts.push(prompt);
    stored.prompts = stored.prompts.slice(-MAX_PER_CHAT);
    this.kv.set(key, JSON.stringify(stored));
    if (early?.edit) this.edit(item.chat, prompt, early.note);
  }

  /**
   * Settles the prompt of `chat` that has a button sending `data`: forgets it and, unless `edit` is
   * false (a click: the adapter already did), replaces its text with the text plus `note` and removes
   * its buttons. A prompt not recorded yet is settled when it is, if `early` (default true). Never
   * throws; a failed edit is logged.
   */
  settle(chat: ChatRef, data: string, note: string, options: { edit?: boolean; early?: boolean } = {}): void {
    if (!this.canSettle(chat)) return;
    const key = formatChat(chat);
    const stored = this.read(key);
    const edit = options.edit !== false;
    const prompt = stored.prompts.find((p) => p.data.includes(data));
    if (prompt) stored.prompts = stored.prompts.filter((p) => p !== prompt);
    else if (options.early !== false) stored.early.push({ data, note, edit, at: this.now() });
    else return;
    this.kv.set(key, JSON.stringify(stored));
    if (prompt && edit) this.edit(chat, prompt, note);
  }

  /** Only platforms that show buttons and can take them away keep records. */
  private canSettle(chat: ChatRef): boolean {
    return this.adapters.get(chat.platform)?.settleButtons !== undefined;
  }

  private edit(chat: ChatRef, prompt: PromptRecord, note: string): void {
    const adapter = this.adapters.get(chat.platform);
    if (!adapter?.settleButtons) return;
    adapter.settleButtons(chat, prompt.messageId, `${prompt.text}\n\n${note}`).catch((err: unknown) => {
      this.log.warn({ platform: chat.platform, err: describeError(err) }, "prompt's buttons not removed");
    });
  }

  private read(key: string): ChatPrompts {
    const raw = this.kv.get(key);
    const since = this.now() - EARLY_TTL_MS;
    try {
      const parsed = raw ? (JSON.parse(raw) as Partial<ChatPrompts>) : {};
      return {
        prompts: Array.isArray(parsed.prompts) ? parsed.prompts : [],
        early: Array.isArray(parsed.early)
          ? parsed.early.filter((a) => a.at > since).slice(-MAX_PER_CHAT)
          : [],
      };
    } catch {
      return { prompts: [], early: [] }; // Unreadable: start over rather than fail a delivery.
    }
  }
}
