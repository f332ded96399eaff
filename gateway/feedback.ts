/**
 * What the user sees while a turn runs: the platform's typing indicator, refreshed, and tool progress
 * as one status message edited in place (throttled) and deleted when the reply is out. Feedback is
 * best-effort: a failure here is logged at debug and never affects the turn.
 */
import { formatChat } from "../core/chat.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { ChatRef, PlatformAdapter } from "../core/types.js";

export interface FeedbackOptions {
  /** @defaultValue 4000 (Telegram's typing lasts 5 s) */
  typingIntervalMs?: number;
  /** Minimum time between two edits of the status message. @defaultValue 1500 */
  editIntervalMs?: number;
  /** Lines kept in the status message. @defaultValue 6 */
  maxLines?: number;
}

interface Status {
  messageId?: string;
  sending?: Promise<void>;
  lines: string[];
  lastEditAt: number;
  pendingEdit?: NodeJS.Timeout;
}

/** Feedback for one running turn. */
export class TurnFeedback {
  private typingTimer: NodeJS.Timeout | undefined;
  private readonly status: Status = { lines: [], lastEditAt: 0 };
  private ended = false;
  /** The last line came from `statusLine`: the next status replaces it. */
  private lastIsStatus = false;

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly chat: ChatRef,
    private readonly replyToId: string | undefined,
    private readonly logger: Logger,
    private readonly options: FeedbackOptions = {},
  ) {}

  /** Starts the typing indicator loop. */
  start(): void {
    if (!this.adapter.sendTyping) return;
    const tick = () => {
      this.adapter.sendTyping?.(this.chat).catch((err: unknown) => this.debug("typing failed", err));
    };
    tick();
    this.typingTimer = setInterval(tick, this.options.typingIntervalMs ?? 4000);
    this.typingTimer.unref?.();
  }

  /**
   * A running tool's own status (`delegate_task`'s children, an MCP server's progress): replaces the
   * previous status line instead of adding one per update.
   */
  statusLine(line: string): void {
    if (this.ended) return;
    if (this.lastIsStatus) this.status.lines.pop();
    this.toolLine(line);
    this.lastIsStatus = true;
  }

  /** Adds a tool progress line (`callId`: the call it starts; none for a tool's own status). */
  toolLine(line: string, callId?: string): void {
    if (this.ended) return;
    this.lastIsStatus = false;
    if (this.replyToId !== undefined) {
      this.adapter.onTurnEvent?.(this.chat, {
        type: "tool",
        replyToId: this.replyToId,
        line,
        ...(callId ? { callId } : {}),
      });
    }
    if (!this.adapter.edit) return;
    const max = this.options.maxLines ?? 6;
    this.status.lines.push(line);
    if (this.status.lines.length > max) this.status.lines.splice(0, this.status.lines.length - max);
    if (!this.status.messageId && !this.status.sending) {
      this.status.sending = this.adapter
        .send(this.chat, {
          text: this.statusText(),
          kind: "notice",
          idempotencyKey: `progress-${Date.now()}`,
        })
        .then((r) => {
          this.status.messageId = r.messageIds[0];
          this.status.lastEditAt = Date.now();
          if (this.ended) void this.removeStatus();
        })
        .catch((err: unknown) => this.debug("progress send failed", err));
      return;
    }
    this.scheduleEdit();
  }

  /**
   * A tool call finished: streaming adapters hear how it went (the status message is not edited for it).
   */
  toolEnd(end: { callId: string; ok: boolean; durationMs: number; result?: string | undefined }): void {
    if (this.ended || this.replyToId === undefined) return;
    this.adapter.onTurnEvent?.(this.chat, { type: "tool-end", replyToId: this.replyToId, ...end });
  }

  /** Stops typing and removes the status message (the reply is out, or the turn ended otherwise). */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.typingTimer) clearInterval(this.typingTimer);
    if (this.status.pendingEdit) clearTimeout(this.status.pendingEdit);
    await this.status.sending;
    await this.removeStatus();
  }

  private statusText(): string {
    return this.status.lines.join("\n");
  }

  private scheduleEdit(): void {
    if (this.status.pendingEdit || !this.status.messageId) return;
    const interval = this.options.editIntervalMs ?? 1500;
    const wait = Math.max(0, this.status.lastEditAt + interval - Date.now());
    this.status.pendingEdit = setTimeout(() => {
      this.status.pendingEdit = undefined;
      if (this.ended || !this.status.messageId) return;
      this.status.lastEditAt = Date.now();
      this.adapter
        .edit?.(this.chat, this.status.messageId, this.statusText())
        .catch((err: unknown) => this.debug("progress edit failed", err));
    }, wait);
    this.status.pendingEdit.unref?.();
  }

  private async removeStatus(): Promise<void> {
    const id = this.status.messageId;
    if (!id) return;
    this.status.messageId = undefined;
    await this.adapter
      .deleteMessage?.(this.chat, id)
      .catch((err: unknown) => this.debug("progress delete failed", err));
  }

  private debug(msg: string, err: unknown): void {
    this.logger.debug({ chat: formatChat(this.chat), error: describeError(err) }, msg);
  }
}
