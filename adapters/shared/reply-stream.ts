/**
 * Replies streamed into a chat by editing messages in place. An adapter that can edit hands the turn's
 * `delta` events to a `ReplyStreams` and asks it, when the final reply is sent, which messages already
 * show a preview of it: the final chunks replace those (edit) instead of being posted again.
 *
 * Cadence: the first preview goes out `firstDelayMs` after the first token (a reply finished by then is
 * sent whole, once), then at most one call in flight and one every `intervalMs`, and only when the
 * platform's send budget has a slot free now (`waitMs`): under load the preview skips edits, it never
 * queues them, so the final text (the durable outbox item) never waits behind a preview. A preview that
 * passes the platform's length continues in a new message. The ids of the preview messages are kept in
 * the adapter's key-value store from the moment they exist, so a gateway killed mid-stream finds them
 * after restart: the re-run turn edits the same message and the final text replaces it.
 */
import { z } from "zod";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { AdapterTurnEvent, ChatRef, KeyValueStore } from "../../core/types.js";
import { openFenceAtEnd } from "./split.js";

/** How replies reach a chat: written in place as they stream (`edit`), or whole when done (`off`). */
export type StreamMode = "off" | "edit";

/** The `stream` key of a platform section that can edit messages. @defaultValue "edit" */
export const streamSetting = z
  .enum(["off", "edit"], {
    error: "must be 'edit' (show the reply as it is written) or 'off' (send it when done)",
  })
  .default("edit");

/** What streaming needs of a platform. `C` is one rendered chunk (Telegram HTML, Slack mrkdwn…). */
export interface PreviewPlatform<C> {
  /** The platform's chunks of `markdown`, as `send` would cut them. */
  chunks(markdown: string): C[];
  /** Posts a new preview message; resolves to its id. May throw (the preview tries again later). */
  post(chat: ChatRef, chunk: C, replyToId: string): Promise<string>;
  /** Replaces a preview message's text. May throw. */
  edit(chat: ChatRef, messageId: string, chunk: C): Promise<void>;
  /** Deletes a preview message. May throw (logged). */
  remove(chat: ChatRef, messageId: string): Promise<void>;
  /** Milliseconds until a call may go without waiting (0: a slot is free now). @defaultValue 0 */
  waitMs?(chat: ChatRef, call: "post" | "edit"): number;
  /** Minimum time between two preview calls in this chat. */
  intervalMs(chat: ChatRef): number;
}

export interface ReplyStreamsOptions<C> {
  platform: PreviewPlatform<C>;
  /** The adapter's durable store (preview ids live under `stream:`). */
  kv: KeyValueStore;
  logger: Logger;
  /**
   * The native id of the message a turn answers, from the `replyToId` of a turn event (the inbound
   * message's gateway id) — the same id the final reply carries as `OutboundMessage.replyToId`.
   */
  nativeId: (eventReplyToId: string) => string;
  /** Wait after the first token before the first preview. @defaultValue 150 */
  firstDelayMs?: number;
  now?: () => number;
}

/** A message showing part of a streamed reply: its id and, when known, the chunk it shows (`sameChunk`). */
export interface PreviewMessage {
  id: string;
  shown?: string | undefined;
}

/** Whether a preview message already shows `chunk` (the final edit would change nothing). */
export function sameChunk(preview: PreviewMessage | undefined, chunk: unknown): boolean {
  return preview?.shown !== undefined && preview.shown === JSON.stringify(chunk);
}

interface Preview {
  chat: ChatRef;
  replyToId: string;
  key: string;
  text: string;
  /** A tool ran: the next text is a new step's answer and replaces what was shown. */
  reset: boolean;
  ids: string[];
  /** What each message shows now (a chunk's JSON), to skip edits that change nothing. */
  shown: (string | undefined)[];
  startedAt: number;
  lastAt: number;
  failures: number;
  closed: boolean;
  timer?: NodeJS.Timeout | undefined;
  inflight?: Promise<void> | undefined;
}

/** The `[SILENT]` marker (core/turn.ts) is never shown, nor any prefix of it. */
const SILENT = "[SILENT]";
const MAX_FAILURES = 3;
/** Previews kept in memory at most (each is one reply being written). */
const MAX_PREVIEWS = 1000;

/** Previews of the replies being written in one adapter's chats. */
export class ReplyStreams<C> {
  private readonly previews = new Map<string, Preview>();
  /** Replies already final: a late delta (Redis pub/sub order) must not open a new preview. */
  private readonly done = new Set<string>();
  private readonly firstDelayMs: number;
  private readonly now: () => number;

  constructor(private readonly o: ReplyStreamsOptions<C>) {
    this.firstDelayMs = o.firstDelayMs ?? 150;
    this.now = o.now ?? Date.now;
  }

  /** Follows one turn event (`AdapterTurnEvent`). Never throws. */
  onEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    const replyToId = this.o.nativeId(event.replyToId);
    const key = keyOf(chat, replyToId);
    if (this.done.has(key)) return;
    if (event.type === "ended") {
      if (event.status === "cancelled") void this.discard(chat, replyToId);
      return;
    }
    if (event.type === "tool-end") return;
    let preview = this.previews.get(key);
    if (event.type === "tool") {
      if (preview) preview.reset = true;
      return;
    }
    if (!preview) {
      preview = {
        chat,
        replyToId,
        key,
        text: "",
        reset: false,
        ids: this.recorded(key),
        shown: [],
        startedAt: this.now(),
        lastAt: 0,
        failures: 0,
        closed: false,
      };
      this.previews.set(key, preview);
      this.trim();
    }
    if (preview.closed) return;
    if (preview.reset) {
      preview.text = "";
      preview.reset = false;
    }
    preview.text += event.text;
    this.schedule(preview);
  }

  /**
   * Stops the preview of the reply to `replyToId` and returns the ids of the messages showing it (in
   * memory, or recorded by a process that died mid-stream), waiting for a call in flight first. The
   * final send edits these instead of posting, then calls `settle`. Empty when nothing was previewed.
   */
  async claim(chat: ChatRef, replyToId: string | undefined): Promise<PreviewMessage[]> {
    if (replyToId === undefined) return [];
    const key = keyOf(chat, replyToId);
    // From now on the reply is final: a delta arriving late (Redis pub/sub order) opens no preview.
    this.markDone(key);
    const preview = this.previews.get(key);
    if (!preview) return this.recorded(key).map((id) => ({ id }));
    preview.closed = true;
    clearTimeout(preview.timer);
    await preview.inflight;
    // Nothing was shown (a quick reply): nothing to settle, and an idle preview left in memory would
    // make every `showing` look through up to MAX_PREVIEWS of them.
    if (preview.ids.length === 0 && this.previews.get(key) === preview) this.previews.delete(key);
    return preview.ids.map((id, i) => ({ id, shown: preview.shown[i] }));
  }

  /**
   * The final text is out: deletes preview messages beyond the `used` first ones (the final reply was
   * shorter than its preview) and forgets the preview. Never throws.
   */
  async settle(
    chat: ChatRef,
    replyToId: string | undefined,
    previews: readonly PreviewMessage[],
    used: number,
  ): Promise<void> {
    if (replyToId === undefined) return;
    for (const { id } of previews.slice(used)) {
      await this.o.platform
        .remove(chat, id)
        .catch((err: unknown) => this.warn("could not delete a streamed preview", err));
    }
    this.forget(keyOf(chat, replyToId));
  }

  /** Whether a preview is on screen in `chat` now (a typing indicator would add nothing to it). */
  showing(chat: ChatRef): boolean {
    for (const preview of this.previews.values()) {
      if (preview.closed || preview.ids.length === 0) continue;
      if (preview.chat.chatId === chat.chatId && preview.chat.threadId === chat.threadId) return true;
    }
    return false;
  }

  /** Stops every preview timer (adapter stop); recorded ids stay for the next start. */
  stop(): void {
    for (const preview of this.previews.values()) {
      preview.closed = true;
      clearTimeout(preview.timer);
    }
    this.previews.clear();
  }

  /** A cancelled turn: its half-written preview is deleted. */
  private async discard(chat: ChatRef, replyToId: string): Promise<void> {
    const ids = await this.claim(chat, replyToId);
    await this.settle(chat, replyToId, ids, 0);
  }

  /**
   * Keeps memory bounded when finals never come for some previews (a silent reply, a failed delivery):
   * the oldest idle ones are dropped from memory (their ids stay recorded for a final send).
   */
  private trim(): void {
    if (this.previews.size <= MAX_PREVIEWS) return;
    for (const [key, preview] of this.previews) {
      if (this.previews.size <= MAX_PREVIEWS) return;
      if (preview.inflight) continue;
      clearTimeout(preview.timer);
      this.previews.delete(key);
    }
  }

  private forget(key: string): void {
    this.previews.delete(key);
    this.o.kv.delete(`stream:${key}`);
    this.markDone(key);
  }

  private markDone(key: string): void {
    this.done.add(key);
    if (this.done.size > 1000) this.done.delete(this.done.values().next().value!);
  }

  private recorded(key: string): string[] {
    const raw = this.o.kv.get(`stream:${key}`);
    if (!raw) return [];
    try {
      const ids = JSON.parse(raw) as unknown;
      return Array.isArray(ids) ? ids.map(String) : [];
    } catch {
      return [];
    }
  }

  private schedule(preview: Preview): void {
    if (preview.timer || preview.inflight || preview.closed) return;
    const now = this.now();
    const first = preview.lastAt === 0;
    const at = first
      ? preview.startedAt + this.firstDelayMs
      : preview.lastAt + this.o.platform.intervalMs(preview.chat);
    preview.timer = setTimeout(() => this.flush(preview), Math.max(0, at - now));
    preview.timer.unref?.();
  }

  /** One preview call: the first message whose text changed is edited, or the next one posted. */
  private flush(preview: Preview): void {
    preview.timer = undefined;
    if (preview.closed || preview.failures >= MAX_FAILURES) return;
    const text = preview.text.trimEnd();
    if (!text.trim() || SILENT.startsWith(text.trim()) || text.trim().startsWith(SILENT)) return;
    const chunks = this.o.platform.chunks(closeOpenMarkdown(text));
    let index = chunks.findIndex(
      (chunk, i) => i >= preview.ids.length || JSON.stringify(chunk) !== preview.shown[i],
    );
    if (index < 0) return;
    const call = index < preview.ids.length ? "edit" : "post";
    const wait = this.o.platform.waitMs?.(preview.chat, call) ?? 0;
    if (wait > 0) {
      // No slot free now: skip, and look again when there is one (the text will have grown).
      preview.timer = setTimeout(() => this.flush(preview), wait);
      preview.timer.unref?.();
      return;
    }
    if (call === "post") index = preview.ids.length;
    const chunk = chunks[index]!;
    preview.inflight = (async () => {
      try {
        if (call === "edit") {
          await this.o.platform.edit(preview.chat, preview.ids[index]!, chunk);
        } else {
          const id = await this.o.platform.post(preview.chat, chunk, preview.replyToId);
          preview.ids.push(id);
          this.o.kv.set(`stream:${preview.key}`, JSON.stringify(preview.ids));
        }
        preview.shown[index] = JSON.stringify(chunk);
        preview.failures = 0;
        preview.lastAt = this.now();
      } catch (err) {
        preview.failures += 1;
        const retryAfterMs = err instanceof PlatformError ? err.retryAfterMs : undefined;
        preview.lastAt = this.now() + (retryAfterMs ?? 0);
        this.warn("a streamed preview call failed", err);
      } finally {
        preview.inflight = undefined;
      }
      this.schedule(preview);
    })();
  }

  private warn(msg: string, err: unknown): void {
    this.o.logger.debug({ error: describeError(err) }, msg);
  }
}

function keyOf(chat: ChatRef, replyToId: string): string {
  return `${chat.chatId}|${chat.threadId ?? ""}|${replyToId}`;
}

/**
 * Closes what a half-written Markdown text leaves open, so a preview renders as the finished text
 * will: an open code fence, an inline code span, `**bold**`, `~~strike~~` of the last paragraph.
 */
export function closeOpenMarkdown(text: string): string {
  const fence = openFenceAtEnd(text);
  if (fence !== undefined) {
    const marker = /^(`{3,}|~{3,})/.exec(fence)?.[1] ?? "```";
    return `${text}${text.endsWith("\n") ? "" : "\n"}${marker}`;
  }
  const paragraph = text.slice(text.lastIndexOf("\n\n") + 1);
  let closers = "";
  const ticks = paragraph.match(/`+/g) ?? [];
  // Inline code spans pair up runs of the same length; an odd one out is open.
  const open = ticks.find((run) => ticks.filter((t) => t === run).length % 2 === 1);
  const outside = paragraph.replace(/`+[^`]*`+/g, "").replace(/`.*$/, "");
  if ((outside.match(/\*\*/g) ?? []).length % 2 === 1) closers = `**${closers}`;
  if ((outside.match(/~~/g) ?? []).length % 2 === 1) closers = `~~${closers}`;
  return `${text}${open ?? ""}${closers}`;
}
