/**
 * Contracts between platform adapters and the gateway. Platform SDK types never cross this line:
 * an adapter turns its platform's events into `InboundMessage`s and sends `OutboundMessage`s.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "./logger.js";

/**
 * Platform names as they appear in chat strings, config sections and env prefixes: each platform module's
 * `name` (app/platforms.ts lists them), or one of the ways in that are not platform modules.
 */
export type PlatformName = "api" | "cli" | "cron" | (string & {});

/**
 * Where a message lives. The string form is `platform:chatId[:threadId]` (see `gateway/chat.ts`).
 * `threadId` names a thread or forum topic inside the chat; each thread is its own session.
 */
export interface ChatRef {
  platform: PlatformName;
  chatId: string;
  threadId?: string | undefined;
}

/** `dm`: one user and the bot. `group`: anything with more people (channels, rooms, groups). */
export type ChatType = "dm" | "group";

/** One tool call the model asked for (OpenAI shape). */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * A model's reasoning as its API gives it back to be sent again with the next request of the turn
 * (Anthropic's signed thinking blocks, OpenAI's encrypted reasoning items, Gemini's thought
 * signatures). Opaque to all but the transport of `api`; another protocol drops it.
 */
export interface ReasoningTrace {
  /** The wire protocol that made it (`anthropic`, `openai-responses`, …). */
  api: string;
  /** The provider that made it: signatures are checked by the provider that signed them. */
  provider: string;
  /** The vendor's own items, as it sent them. */
  items: unknown[];
}

/** An assistant message: text, tool calls, and the reasoning to send back within the turn. */
export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: ToolCall[] | undefined;
  /** Kept within a turn (the session store keeps text and tool calls only). */
  reasoning?: ReasoningTrace | undefined;
}

/** A conversation message as the model sees it (OpenAI chat-completions shape, text content). */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string; name?: string | undefined }
  | AssistantMessage
  | { role: "tool"; content: string; tool_call_id: string };

/** How sessions in groups are keyed. `per_user`: each sender has their own; `shared`: one per chat. */
export type GroupSessionMode = "per_user" | "shared";

/** What identifies a session's owner; `sessionKey()` turns it into the key string. */
export interface SessionKeyParts {
  chat: ChatRef;
  chatType: ChatType;
  userId: string;
  /** The agent the session is with; undefined for the default agent (its keys carry no prefix). */
  agent?: string | undefined;
}

/** A file that came in with a message, already downloaded to `path` (under `HERALD_HOME/cache`). */
export interface InboundAttachment {
  kind: "image" | "audio" | "voice" | "video" | "document";
  path: string;
  fileName?: string | undefined;
  mimeType?: string | undefined;
  sizeBytes?: number | undefined;
}

/** One message from a platform user, in the gateway's terms. */
export interface InboundMessage {
  platform: PlatformName;
  /** Unique per platform (the inbound ledger's dedupe key); stable across redeliveries. */
  messageId: string;
  chat: ChatRef;
  chatType: ChatType;
  sender: { id: string; name?: string | undefined; isBot?: boolean | undefined };
  /** The text as the user wrote it, with the bot's own mention removed. */
  text: string;
  /**
   * The bot was addressed: a mention, a reply to one of its messages, a `/cmd@bot`. Always true in DMs.
   * The gateway answers in groups only when this is true, the platform's require-mention setting is off,
   * or the thread already has a conversation with the bot.
   */
  mentioned: boolean;
  /** Platform message id of this message, for quoting in the reply. Usually equal to the native id. */
  replyToId?: string | undefined;
  attachments?: InboundAttachment[] | undefined;
  /** Epoch ms when the platform says the message was sent. */
  sentAt?: number | undefined;
  /** Platform-specific facts the adapter wants back on send (e.g. email Message-ID, Subject). Strings only. */
  meta?: Record<string, string> | undefined;
  /**
   * Earlier conversation supplied by the client itself (stateless OpenAI-compatible API requests send the
   * whole conversation each time); seeds a new session. Platforms leave it unset.
   */
  context?: ChatMessage[] | undefined;
  /**
   * The adapter shows this message's reply as it is written (`onTurnEvent` "delta" events): the turn then
   * streams its text. Unset, no text deltas are sent at all (they cost CPU per chunk, and Redis traffic).
   */
  streamReply?: boolean | undefined;
  /**
   * A click on one of the bot's buttons (its `data` is the text). The adapter marks the prompt answered
   * itself; the gateway settles prompts answered any other way.
   */
  viaButton?: boolean | undefined;
  /**
   * Function tools the client declared and runs itself (the API server's `/v1/responses`): the model
   * may call them beside Herald's own tools; a step that calls one ends the turn with the calls for the
   * client (`OutboundMessage.clientCalls`).
   */
  clientTools?: ClientTool[] | undefined;
  /** The client's outputs of the calls an earlier turn handed it: this turn opens with that step. */
  clientResults?: ClientToolResults | undefined;
  /** The client's instructions for this turn alone, added to the system prompt (`/v1/responses`). */
  instructions?: string | undefined;
}

/** A function tool an API client declares and runs itself. */
export interface ClientTool {
  name: string;
  description?: string | undefined;
  /** JSON Schema of the arguments. @defaultValue an object with any properties */
  parameters?: Record<string, unknown> | undefined;
}

/**
 * The step in which the model called client tools: the assistant message with its calls, then one
 * result per call in order (Herald's own calls' real results; a client call's a placeholder).
 */
export interface ClientToolCalls {
  /** The calls the client runs, as the model made them. */
  calls: ToolCall[];
  step: ChatMessage[];
}

/** What the client sent back for a `ClientToolCalls`: the step, and each call's output. */
export interface ClientToolResults {
  step: ChatMessage[];
  outputs: { callId: string; output: string }[];
}

/** A file the agent wants sent: a path on the gateway's disk. */
export interface OutboundFile {
  path: string;
  fileName?: string | undefined;
  mimeType?: string | undefined;
  /** A caption or alt text when the platform supports one. */
  caption?: string | undefined;
  /**
   * A spoken reply: sent as the platform's voice note where it has one (Telegram sendVoice, WhatsApp
   * PTT; the file is then Ogg/Opus), as an audio file elsewhere.
   */
  voice?: boolean | undefined;
}

/**
 * One button under a message. `label` is what the user sees; `data` is what a click sends back, as a
 * message of the clicking user with this text (a command line like `/approve`, or a choice's text).
 */
export interface OutboundButton {
  label: string;
  data: string;
}

/** One reply or notice to deliver. `text` is Markdown; the adapter renders its platform's dialect. */
export interface OutboundMessage {
  text: string;
  /** What kind of message this is; adapters may style notices differently. @defaultValue "reply" */
  kind?: "reply" | "notice" | "error" | undefined;
  /** Native id of the message being answered (quote it in groups, thread it in email). */
  replyToId?: string | undefined;
  files?: OutboundFile[] | undefined;
  /**
   * Stable key of this outbox item. Platforms with idempotent sends (Matrix txn ids, Discord nonces) use
   * it so a retried send never posts twice; chunk `i` uses `${idempotencyKey}-${i}`.
   */
  idempotencyKey: string;
  /** Meta of the inbound message this answers (e.g. email headers), as the adapter gave it. */
  inboundMeta?: Record<string, string> | undefined;
  /** Subject line for platforms that have one (email). */
  subject?: string | undefined;
  /**
   * On `kind: "error"`: the failure's `HeraldError` code and the model's Retry-After, so an adapter with
   * statuses (the API server) can answer 429/502/503/504 instead of a message.
   */
  failure?: { code?: string | undefined; retryAfterMs?: number | undefined } | undefined;
  /**
   * Rows of buttons under the message (an approval's Approve / Deny, a question's choices). Adapters
   * that show them say so with `PlatformAdapter.sendsButtons`; for the others the gateway appends a
   * plain-text fallback (`buttonsFallback`) before `send`. Kept with the outbox item, so a retried or
   * post-restart delivery still has them.
   */
  buttons?: OutboundButton[][] | undefined;
  /** The turn ended calling tools the client runs (see `InboundMessage.clientTools`). */
  clientCalls?: ClientToolCalls | undefined;
}

/** Options for one `send`. */
export interface SendOptions {
  /**
   * Chunks already delivered by an earlier attempt of this same outbox item: start at this index.
   * Chunking is deterministic for the same text, so a retry never re-sends a delivered chunk.
   * @defaultValue 0
   */
  fromChunk?: number | undefined;
  /** Called after each chunk the platform confirmed. Must not throw. */
  onChunkSent?: ((index: number, messageId: string) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** What the platform confirmed. `messageIds` in chunk order (only the chunks sent by this call). */
export interface SendResult {
  messageIds: string[];
}

/**
 * Turn lifecycle events the gateway passes to adapters that stream (the API server; chat previews; the
 * terminal). `tool` is a progress line: a tool call starting (with its `callId`) or a running tool's own
 * status (without); `tool-end` is that call finishing, with how long it took and the start of its output.
 */
export type AdapterTurnEvent =
  | { type: "delta"; replyToId: string; text: string }
  | { type: "tool"; replyToId: string; line: string; callId?: string | undefined }
  | {
      type: "tool-end";
      replyToId: string;
      callId: string;
      ok: boolean;
      durationMs: number;
      result?: string | undefined;
    }
  | { type: "ended"; replyToId: string; status: "ok" | "cancelled" | "failed" };

/**
 * Called by an adapter for each inbound message. Resolves once the message is durably recorded in the
 * inbound ledger (so the adapter may then confirm it to the platform: offset, ack, \Seen flag).
 * Rejects only when recording failed; the adapter must then leave the message unconfirmed.
 */
export type InboundHandler = (message: InboundMessage) => Promise<InboundOutcome>;

/** What the gateway did with an inbound message (adapters rarely need it; tests do). */
export type InboundOutcome =
  | "accepted"
  | "duplicate"
  | "command"
  | "ignored"
  | "unauthorized"
  | "pairing"
  | "malformed";

/** One platform connection. `start`/`stop` are an idempotent pair. */
export interface PlatformAdapter {
  readonly platform: PlatformName;
  /**
   * Connects and starts receiving. Resolves when receiving (or rejects with a PlatformError naming the
   * fix: bad token, missing intent). Must not throw later: runtime faults are logged and retried inside.
   */
  start(onMessage: InboundHandler): Promise<void>;
  /** Stops receiving and closes connections. Safe to call twice or before start. */
  stop(): Promise<void>;
  /**
   * Delivers one message (split into chunks as the platform needs). Throws PlatformError on failure,
   * with `retryable` and `retryAfterMs` set; the outbox retries.
   */
  send(chat: ChatRef, message: OutboundMessage, options?: SendOptions): Promise<SendResult>;
  /** Replaces the text of a message the bot sent (tool progress). */
  edit?(chat: ChatRef, messageId: string, text: string): Promise<void>;
  /**
   * Replaces the text (markdown) of a prompt the bot sent with buttons and removes the buttons: an
   * answer typed instead of clicked, or a request that lapsed. Throws PlatformError on failure.
   */
  settleButtons?(chat: ChatRef, messageId: string, text: string): Promise<void>;
  /** Deletes a message the bot sent (the progress line once the reply is out). */
  deleteMessage?(chat: ChatRef, messageId: string): Promise<void>;
  /** Shows "typing…" (or the platform's equivalent) for a few seconds. */
  sendTyping?(chat: ChatRef): Promise<void>;
  /** Serves `/webhooks/<platform>` (a further account's `/webhooks/<platform>@<account>`) on the gateway's HTTP server. */
  handleWebhook?(request: Request): Promise<Response>;
  /**
   * Serves paths of its own on the gateway's HTTP server with Node's request and response (the web
   * chat's `/chat`, which streams): true when it answered, false for a path it does not own. Asked after
   * the API server, the dashboard and the other routes; the request guard has seen the request first.
   */
  handleHttp?(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** Streaming adapters receive turn events for the messages they delivered. Must not throw. */
  onTurnEvent?(chat: ChatRef, event: AdapterTurnEvent): void;
  /** Whether the adapter is really receiving now (for /health). */
  status?(): AdapterStatus;
  /**
   * The adapter renders `OutboundMessage.buttons` (and a click comes back as an `InboundMessage` from
   * the clicking user whose text is the button's `data`). Unset: the gateway sends the text fallback.
   */
  readonly sendsButtons?: boolean | undefined;
}

export interface AdapterStatus {
  state: "starting" | "running" | "reconnecting" | "stopped" | "failed";
  detail?: string | undefined;
}

/** A small durable key-value store an adapter may use for its own state (offsets, sync tokens, creds). */
export interface KeyValueStore {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  delete(key: string): void;
}

/** What every adapter factory receives besides its own config section. */
export interface AdapterDeps {
  logger: Logger;
  /** `HERALD_HOME`. */
  homeDir: string;
  /** Where inbound files go (`HERALD_HOME/cache`); created by the gateway. */
  cacheDir: string;
  /** Durable state namespaced to this adapter. */
  kv: KeyValueStore;
  /**
   * Where the gateway's HTTP server hands requests to this adapter's `handleWebhook`:
   * `/webhooks/<platform>`, or a further bot account's `/webhooks/<platform>@<account>`.
   * @defaultValue `/webhooks/<platform>`
   */
  webhookPath?: string | undefined;
  /**
   * The gateway's access decision for a user of this platform (allowlists, GATEWAY_ALLOW_ALL_USERS,
   * approved pairing), for decisions an adapter must take before any message (Matrix invites, mail from
   * strangers). Messages themselves are still authorised by the gateway.
   */
  isAllowed?: ((userId: string) => boolean) | undefined;
  /**
   * Whether the gateway will answer this message, by the one mention-gating rule (a group message
   * nobody addressed to the bot is ignored unless the platform's require-mention is off or the thread
   * is engaged). Adapters use it to skip work for ignored chatter (downloading its files). Unset: yes.
   */
  isAddressed?: ((message: InboundMessage) => boolean) | undefined;
  /** Inbound files larger than this are not downloaded. @defaultValue DEFAULT_MEDIA_MAX_BYTES */
  mediaMaxBytes?: number | undefined;
  /**
   * The gateway's commands everyone may run, for the platform's own command menu (Telegram's
   * `setMyCommands`, Discord's application commands), asked at start. Unset: the adapter's defaults.
   */
  commandMenu?: (() => CommandMenuEntry[]) | undefined;
  /**
   * Settles once the menu is complete: the gateway starts its adapters before it loads the plugins and
   * the MCP servers' commands, so adapters publish the menu (and look commands up in it) after this.
   * Unset: the menu is complete from the start.
   */
  commandMenuReady?: Promise<unknown> | undefined;
  /**
   * What a platform needs of the gateway beyond these (the web chat: sessions, pairing, owners), one
   * member per platform, each declared by its platform by augmenting {@link AdapterServices}.
   */
  services?: AdapterServices | undefined;
}

/**
 * The gateway's services for platforms that need more than {@link AdapterDeps}: empty here; a platform
 * adds its member from its own folder (`declare module "../../core/types.js" { interface
 * AdapterServices { web?: WebChatServices } }`) and the composition root fills it.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from the platforms
export interface AdapterServices {}

/** A command as a platform's menu shows it: its name (no slash) and a one-line description. */
export interface CommandMenuEntry {
  name: string;
  description: string;
}

/** The media size cap when none is configured (`HERALD_MEDIA_MAX_BYTES`): 20 MiB. */
export const DEFAULT_MEDIA_MAX_BYTES = 20 * 1024 * 1024;

/**
 * The largest file Herald sends to a chat (50 MiB, Telegram's limit for bots): adapters that upload a
 * file read it whole, so `send_message` refuses larger ones and the adapters read with this cap.
 */
export const MAX_OUTBOUND_FILE_BYTES = 50 * 1024 * 1024;
