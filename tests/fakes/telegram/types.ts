/** Types of the fake Telegram Bot API server (`startFakeTelegram`). */

/** One recorded call, in arrival order. */
export interface FakeCall {
  method: string;
  /** The parameters as the bot sent them (JSON body, or multipart fields with JSON values decoded). */
  params: Record<string, unknown>;
  /** Uploaded files of a multipart call, by field name. */
  files: Record<string, FakeUpload>;
  /** The HTTP status the fake answered with. */
  status: number;
  /** Epoch ms of arrival. */
  at: number;
}

export interface FakeUpload {
  fileName: string;
  sizeBytes: number;
  content: Buffer;
}

/** A fault to inject into the next matching calls. */
export interface FakeFault {
  /** HTTP status and `error_code`. Omit for a slow but successful answer (`delayMs` only). */
  status?: number;
  /** Bot API `description`. @defaultValue a Telegram-like text for the status */
  description?: string;
  /** Seconds, sent as `parameters.retry_after` (429). */
  retryAfter?: number;
  /** Only calls whose `chat_id` is this. */
  chatId?: string | number;
  /** Only calls for which this returns true. */
  when?: (params: Record<string, unknown>) => boolean;
  /** How many matching calls fail. @defaultValue 1 */
  times?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer with this raw body (e.g. an HTML error page) instead of JSON. */
  rawBody?: string;
}

/** A message as the fake stores it (the bot's and the users'). */
export interface StoredMessage {
  message_id: number;
  chat: { id: number; type: string; title?: string; is_forum?: boolean };
  from?: { id: number; is_bot: boolean; first_name: string; username?: string };
  date: number;
  text?: string;
  entities?: unknown[];
  caption?: string;
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: StoredMessage;
  photo?: unknown[];
  document?: unknown;
  /** Whether the bot sent it with a parse mode (false: plain text). Not part of the Bot API. */
  formatted?: boolean;
  deleted?: boolean;
  [key: string]: unknown;
}

/** A user message to inject as an update. */
export interface UserMessageInput {
  chatId: number;
  text?: string;
  fromId?: number;
  fromName?: string;
  /** Forum topic id (the message is a topic message). */
  threadId?: number;
  /** Id of a message in the same chat this one replies to. */
  replyTo?: number;
  /** Extra Message fields (photo, document, caption, entities...). */
  extra?: Record<string, unknown>;
}

export interface FakeTelegramOptions {
  /** The token the fake accepts; others get 401. @defaultValue "7000000001:TEST-token_for_fake" */
  token?: string;
  /** The bot's username. @defaultValue "herald_bot" */
  username?: string;
}

export interface FakeTelegram {
  /** The API root to give grammY (`apiRoot`, no trailing slash). */
  url: string;
  token: string;
  bot: { id: number; is_bot: true; first_name: string; username: string };
  calls: FakeCall[];
  callsTo(method: string, chatId?: string | number): FakeCall[];
  /** Queues an update (assigns `update_id` when missing); returns its id. */
  pushUpdate(update: Record<string, unknown>): number;
  /** Queues a raw value as an update, unchecked (malformed updates). */
  pushRaw(value: unknown): void;
  /** Queues a user message update and returns the stored message. */
  userSends(input: UserMessageInput): StoredMessage;
  /**
   * A user clicks a button of the bot's message: queues a `callback_query` update carrying the message
   * as it stands and the button's `callback_data` (found by its label). Returns the query's id.
   * @throws when the message has no button with that label
   */
  userClicks(input: {
    chatId: number;
    messageId: number;
    label: string;
    fromId?: number;
    fromName?: string;
  }): string;
  /** Builds a user message (stored, so replies to it resolve) without queueing an update. */
  userMessage(input: UserMessageInput): StoredMessage;
  /** Opens a forum topic in a (forum) supergroup, by a user or the bot; returns its thread id. */
  createTopic(chatId: number, name: string, byBot?: boolean): number;
  /** Registers a downloadable file; returns its `file_id` and `file_unique_id`. */
  addFile(
    content: Buffer | string,
    filePath: string,
  ): { file_id: string; file_unique_id: string; file_size: number };
  /** Injects a fault into the next calls of `method`. */
  fault(method: string, fault: FakeFault): void;
  /** Forgets every fault not used up yet. */
  clearFaults(): void;
  /** Messages in a chat, in order, as they stand now (edits applied, deleted ones marked). */
  messages(chatId: string | number): StoredMessage[];
  /** The bot's messages in a chat (or one topic of it) that are not deleted, service messages left out. */
  botMessages(chatId: string | number, threadId?: number): StoredMessage[];
  /** Resolves when `check()` holds (re-checked on every call the fake serves), rejects after `timeoutMs`. */
  waitFor(check: () => boolean, timeoutMs?: number): Promise<void>;
  /** Highest `offset` a `getUpdates` has confirmed. */
  confirmedOffset(): number;
  /** Updates not yet confirmed. */
  pendingUpdates(): number;
  /** The webhook as set by `setWebhook`. */
  webhook(): { url: string; secretToken?: string } | undefined;
  /** POSTs an update to the webhook like Telegram does; returns the HTTP status. */
  deliverWebhook(update: Record<string, unknown>): Promise<number>;
  /** Stops listening and drops connections (a network outage); `reconnect()` listens again on the same port. */
  disconnect(): Promise<void>;
  reconnect(): Promise<void>;
  close(): Promise<void>;
}
