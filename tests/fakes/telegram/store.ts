/**
 * What the fake Bot API remembers: chats and their messages (users' and the bot's, with per-chat
 * message ids), downloadable files, and the update queue with Telegram's confirmation rule (an update is
 * confirmed, and forgotten, once `getUpdates` is called with an offset above its id).
 */
import { createHash } from "node:crypto";
import type { StoredMessage, UserMessageInput } from "./types.js";

export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_size: number;
  file_path: string;
  content: Buffer;
}

interface QueuedUpdate {
  id: number;
  value: unknown;
}

export class FakeStore {
  readonly bot: { id: number; is_bot: true; first_name: string; username: string };
  private readonly chats = new Map<string, StoredMessage[]>();
  private readonly counters = new Map<string, number>();
  private readonly forums = new Set<string>();
  readonly files = new Map<string, StoredFile>();
  readonly filesByPath = new Map<string, StoredFile>();
  private updates: QueuedUpdate[] = [];
  private nextUpdateId = 500_000_001;
  confirmed = 0;
  /** The bot's command menu as `setMyCommands` last set it. */
  commands: { command: string; description: string }[] = [];

  constructor(botId: number, username: string) {
    this.bot = { id: botId, is_bot: true, first_name: "Herald", username };
  }

  chatOf(chatId: string | number): StoredMessage["chat"] {
    const id = Number(chatId);
    if (id > 0) return { id, type: "private" };
    const chat: StoredMessage["chat"] = { id, type: "supergroup", title: `Group ${id}` };
    if (this.forums.has(String(id))) chat.is_forum = true;
    return chat;
  }

  messages(chatId: string | number): StoredMessage[] {
    const key = String(chatId);
    let list = this.chats.get(key);
    if (!list) {
      list = [];
      this.chats.set(key, list);
    }
    return list;
  }

  find(chatId: string | number, messageId: number): StoredMessage | undefined {
    return this.messages(chatId).find((m) => m.message_id === messageId);
  }

  /** Stores a message with the chat's next message id. */
  add(chatId: string | number, fields: Omit<StoredMessage, "message_id" | "chat" | "date">): StoredMessage {
    const key = String(chatId);
    const id = (this.counters.get(key) ?? 0) + 1;
    this.counters.set(key, id);
    const message: StoredMessage = {
      message_id: id,
      date: Math.floor(Date.now() / 1000),
      chat: this.chatOf(chatId),
      ...fields,
    };
    this.messages(chatId).push(message);
    return message;
  }

  userMessage(input: UserMessageInput): StoredMessage {
    if (input.threadId !== undefined) this.forums.add(String(input.chatId));
    const fromId = input.fromId ?? 111;
    const fields: Omit<StoredMessage, "message_id" | "chat" | "date"> = {
      from: { id: fromId, is_bot: false, first_name: input.fromName ?? `User${fromId}` },
      ...(input.text !== undefined ? { text: input.text } : {}),
      ...input.extra,
    };
    if (input.threadId !== undefined) {
      fields.message_thread_id = input.threadId;
      fields.is_topic_message = true;
    }
    const replyTo = input.replyTo !== undefined ? this.find(input.chatId, input.replyTo) : undefined;
    if (replyTo) fields.reply_to_message = withoutReply(replyTo);
    else if (input.threadId !== undefined) {
      // In a forum topic, a message that replies to nothing replies to the topic's first message.
      const root = this.find(input.chatId, input.threadId);
      if (root) fields.reply_to_message = withoutReply(root);
    }
    return this.add(input.chatId, fields);
  }

  /** Opens a forum topic (its first message's id is the thread id). */
  createTopic(chatId: number, name: string, byBot = false): number {
    this.forums.add(String(chatId));
    const root = this.add(chatId, {
      from: byBot ? this.bot : { id: 111, is_bot: false, first_name: "User111" },
      forum_topic_created: { name, icon_color: 7322096 },
      is_topic_message: true,
    });
    root.message_thread_id = root.message_id;
    return root.message_id;
  }

  addFile(content: Buffer, filePath: string): StoredFile {
    const digest = createHash("sha256").update(content).update(filePath).digest("hex");
    const file: StoredFile = {
      file_id: `BQACAgQAAx${digest.slice(0, 24)}`,
      file_unique_id: `AgAD${digest.slice(24, 32)}`,
      file_size: content.length,
      file_path: filePath,
      content,
    };
    this.files.set(file.file_id, file);
    this.filesByPath.set(filePath, file);
    return file;
  }

  /** Keeps a message that arrived in a hand-made update, so replies to it resolve. */
  remember(message: StoredMessage): void {
    const key = String(message.chat.id);
    if (this.find(key, message.message_id)) return;
    this.messages(key).push(message);
    this.counters.set(key, Math.max(this.counters.get(key) ?? 0, message.message_id));
  }

  pushUpdate(update: Record<string, unknown>): number {
    const message = update["message"] as StoredMessage | undefined;
    if (typeof message?.message_id === "number" && typeof message.chat?.id === "number")
      this.remember(message);
    const id = typeof update["update_id"] === "number" ? update["update_id"] : this.nextUpdateId++;
    this.nextUpdateId = Math.max(this.nextUpdateId, id + 1);
    this.enqueue({ id, value: { ...update, update_id: id } });
    return id;
  }

  pushRaw(value: unknown): void {
    const declared = (value as { update_id?: unknown } | null)?.update_id;
    const id = typeof declared === "number" ? declared : this.nextUpdateId++;
    this.nextUpdateId = Math.max(this.nextUpdateId, id + 1);
    this.enqueue({ id, value });
  }

  private enqueue(update: QueuedUpdate): void {
    this.updates.push(update);
    this.updates.sort((a, b) => a.id - b.id);
  }

  /** Applies `offset` (confirming what lies below it) and returns up to `limit` pending updates. */
  take(offset: number | undefined, limit: number): unknown[] {
    if (offset !== undefined && offset > this.confirmed) {
      this.confirmed = offset;
      this.updates = this.updates.filter((u) => u.id >= offset);
    }
    return this.updates.slice(0, limit).map((u) => u.value);
  }

  pending(): number {
    return this.updates.length;
  }
}

function withoutReply(message: StoredMessage): StoredMessage {
  const { reply_to_message: _, formatted: __, deleted: ___, ...rest } = message;
  return rest;
}
