/**
 * A minimal in-memory platform adapter for gateway tests that need chat semantics the API server lacks
 * (DMs from unknown users, groups, typing, edits). It stands at the adapter boundary: the runner talks to
 * it through the real PlatformAdapter contract.
 */
import type {
  ChatRef,
  InboundHandler,
  InboundMessage,
  InboundOutcome,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../../core/types.js";

export interface SentMessage {
  chat: ChatRef;
  message: OutboundMessage;
  id: string;
}

export class FakeChatAdapter implements PlatformAdapter {
  readonly sent: SentMessage[] = [];
  readonly edits: { id: string; text: string }[] = [];
  readonly deleted: string[] = [];
  typing = 0;
  /** Set to make the next N sends fail with this error. */
  failNext: { count: number; error: Error } | undefined;
  private onMessage: InboundHandler | undefined;
  private counter = 0;
  private waiters: (() => void)[] = [];

  constructor(readonly platform = "fakechat") {}

  async start(onMessage: InboundHandler): Promise<void> {
    this.onMessage = onMessage;
  }

  async stop(): Promise<void> {
    this.onMessage = undefined;
  }

  async send(chat: ChatRef, message: OutboundMessage, _options?: SendOptions): Promise<SendResult> {
    if (this.failNext && this.failNext.count > 0) {
      this.failNext.count--;
      throw this.failNext.error;
    }
    const id = `m${++this.counter}`;
    this.sent.push({ chat, message, id });
    for (const w of this.waiters.splice(0)) w();
    return { messageIds: [id] };
  }

  async edit(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    this.edits.push({ id: messageId, text });
  }

  async deleteMessage(_chat: ChatRef, messageId: string): Promise<void> {
    this.deleted.push(messageId);
  }

  async sendTyping(): Promise<void> {
    this.typing++;
  }

  /** Delivers a message from a user, as a platform would. */
  inject(partial: Partial<InboundMessage> & { text: string }): Promise<InboundOutcome> {
    if (!this.onMessage) throw new Error("adapter not started");
    const id = partial.messageId ?? `in${++this.counter}`;
    const chat = partial.chat ?? { platform: this.platform, chatId: "chat-1" };
    return this.onMessage({
      platform: this.platform,
      messageId: id,
      chat,
      chatType: "dm",
      sender: { id: "alice", name: "Alice" },
      mentioned: true,
      ...partial,
    });
  }

  /** Replies (kind reply/error/notice, not progress lines) in send order. */
  texts(): string[] {
    return this.sent
      .filter((s) => !s.message.idempotencyKey.startsWith("progress-"))
      .map((s) => s.message.text);
  }

  /** Resolves once `count` messages (progress lines excluded) have been sent. */
  async waitForTexts(count: number, timeoutMs = 10_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.texts().length < count) {
      if (Date.now() > deadline)
        throw new Error(`expected ${count} messages, got ${JSON.stringify(this.texts())}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.texts();
  }
}
