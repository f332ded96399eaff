/**
 * The terminal as a platform (`herald chat` without `--url`): one local chat, `cli:<login name>`, in a
 * gateway embedded in this process. The adapter is also the conversation (`ChatBackend`) the screens
 * use: what they submit becomes an inbound message, what the gateway sends and streams becomes events.
 */
import { userInfo } from "node:os";
import type {
  AdapterTurnEvent,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendResult,
} from "../../core/types.js";
import type { ChatPort } from "../shared/chat-port.js";
import type { ChatBackend, ChatEvent, ChatInfo, SubmitOptions } from "./types.js";

export { type LineChatOptions, runLineChat } from "./line.js";
export { createRemoteChat, type RemoteChatOptions, remoteProblem } from "./remote.js";
export type { ChatBackend, ChatEvent, ChatInfo, SubmitOptions } from "./types.js";

export interface CliAdapterOptions {
  /** The session's chat id. @defaultValue the login name (one chat per terminal user) */
  chatId?: string | undefined;
}

/** The login name, or `USER`, or `user` where the system has no name for this uid (a container). */
export function terminalUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env["USER"] ?? "user";
  }
}

/** The terminal's adapter and conversation. */
export class CliAdapter implements PlatformAdapter, ChatBackend {
  readonly platform = "cli";
  /** The screens offer buttons as choices (a picked one comes back as its `data`). */
  readonly sendsButtons = true;
  readonly where = "embedded";
  readonly chatName: string;
  readonly info: ChatInfo;
  private readonly chat: ChatRef;
  private readonly user = terminalUser();
  private readonly listeners = new Set<(event: ChatEvent) => void>();
  private onMessage: InboundHandler | undefined;
  private port: ChatPort | undefined;
  private counter = 0;

  constructor(options: CliAdapterOptions = {}) {
    this.chat = { platform: "cli", chatId: options.chatId ?? this.user };
    this.chatName = `cli:${this.chat.chatId}`;
    const chat = this.chat;
    this.info = {
      commands: async () => this.port?.commands() ?? [],
      status: async () => this.port?.status(chat),
      sessions: async () => this.port?.sessions(chat) ?? [],
      history: async (limit) => this.port?.history(chat, limit) ?? [],
    };
  }

  /** Gives the conversation the gateway's chat port (known once the gateway runs). */
  attach(port: ChatPort): void {
    this.port = port;
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.onMessage = onMessage;
  }

  async stop(): Promise<void> {
    this.onMessage = undefined;
  }

  submit(text: string, options: SubmitOptions = {}): string {
    const id = `${Date.now()}-${++this.counter}`;
    const handler = this.onMessage;
    if (!handler) {
      queueMicrotask(() => this.error(id, "The chat is not running."));
      return id;
    }
    handler({
      platform: "cli",
      messageId: id,
      chat: this.chat,
      chatType: "dm",
      sender: { id: this.user, name: this.user },
      text,
      mentioned: true,
      ...(options.stream ? { streamReply: true } : {}),
      ...(options.viaButton ? { viaButton: true } : {}),
    }).catch((err: unknown) =>
      this.error(
        id,
        `The message could not be recorded: ${err instanceof Error ? err.message : String(err)}`,
      ),
    );
    return id;
  }

  onEvent(listener: (event: ChatEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async send(_chat: ChatRef, message: OutboundMessage): Promise<SendResult> {
    this.emit({
      type: "reply",
      id: message.replyToId,
      kind: message.kind ?? "reply",
      text: message.text,
      ...(message.buttons?.length ? { buttons: message.buttons } : {}),
    });
    return { messageIds: [`${message.idempotencyKey}`] };
  }

  onTurnEvent(_chat: ChatRef, event: AdapterTurnEvent): void {
    const id = event.replyToId;
    switch (event.type) {
      case "delta":
        this.emit({ type: "delta", id, text: event.text });
        return;
      case "tool":
        this.emit({ type: "tool", id, line: event.line, callId: event.callId });
        return;
      case "tool-end": {
        const { callId, ok, durationMs, result } = event;
        this.emit({ type: "tool-end", id, callId, ok, durationMs, result });
        return;
      }
      case "ended":
        if (event.status !== "ok") this.emit({ type: "ended", id, status: event.status });
        return;
    }
  }

  private error(id: string, text: string): void {
    this.emit({ type: "reply", id, kind: "error", text });
  }

  private emit(event: ChatEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** Builds the terminal adapter. */
export function createCliAdapter(options: CliAdapterOptions = {}): CliAdapter {
  return new CliAdapter(options);
}
