/**
 * Types of the fake Discord (REST + gateway WebSocket on 127.0.0.1) that end-to-end tests point
 * discord.js at. Payloads are loosely typed records: tests read the fields they need.
 */

/** A Discord JSON object as it travels on the wire. */
// biome-ignore lint/suspicious/noExplicitAny: wire payloads are open-ended JSON; tests pick the fields they read.
export type Json = Record<string, any>;

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (REST `Authorization: Bot <token>`, gateway IDENTIFY). @defaultValue "fake-bot-token" */
  token?: string;
  /** `heartbeat_interval` in HELLO. @defaultValue 41250 (Discord's) */
  heartbeatIntervalMs?: number;
  /**
   * Whether the application has the privileged Message Content intent enabled in the developer portal.
   * When false, an IDENTIFY asking for it is closed with 4014 (disallowed intents). @defaultValue true
   */
  messageContentIntent?: boolean;
  /** How long `enforce_nonce` remembers a nonce. @defaultValue 300000 (a few minutes, like Discord) */
  nonceWindowMs?: number;
}

/** One REST call as the fake received it. */
export interface RecordedRequest {
  method: string;
  /** Path after `/api/v10`, e.g. `/channels/1/messages`. */
  path: string;
  query: Record<string, string>;
  /** JSON body (or the `payload_json` part of a multipart body). */
  body: Json | undefined;
  files: RecordedFile[];
  /** Status the fake answered with (0 when the client went away first). */
  status: number;
  authorized: boolean;
}

export interface RecordedFile {
  field: string;
  name: string;
  contentType: string;
  data: Buffer;
}

/** Who a bot message really notified, computed from content + allowed_mentions as Discord does. */
export interface Pings {
  everyone: boolean;
  roles: string[];
  users: string[];
}

/** A message the bot created through REST. */
export interface PostedMessage {
  id: string;
  channelId: string;
  content: string;
  nonce: string | undefined;
  /** Id of the message it replies to (message_reference), if any. */
  replyTo: string | undefined;
  allowedMentions: Json | undefined;
  pings: Pings;
  files: RecordedFile[];
  /** Content after the last edit; equal to `content` when never edited. */
  currentContent: string;
  /** Message components (action rows of buttons) as they stand now; empty when none. */
  components: Json[];
  edits: string[];
  deleted: boolean;
}

/** An injected fault for the next REST call(s) that match. */
export interface FaultRule {
  /** HTTP method to match. @defaultValue any */
  method?: string;
  /** Matched against the path after `/api/v10`. */
  path: RegExp;
  /** Answer with this status (429, 5xx, 4xx). @defaultValue 500 */
  status?: number;
  /** Discord JSON error code for 4xx answers. */
  code?: number;
  /** For 429: `retry_after` and the `Retry-After` header. @defaultValue 1000 */
  retryAfterMs?: number;
  /** Carry out the call first, then fail the answer (a lost response). @defaultValue false */
  commit?: boolean;
  /** Wait before answering; with `commit`, the call is carried out first. @defaultValue 0 */
  delayMs?: number;
  /** Answer 200 with this raw (malformed) body instead. */
  rawBody?: string;
  /** How many matching calls this rule affects. @defaultValue 1 */
  times?: number;
}

/** One gateway frame, in either direction. */
export interface GatewayFrame {
  dir: "in" | "out";
  /** 1-based connection number. */
  connection: number;
  op: number;
  t?: string | null | undefined;
  s?: number | null | undefined;
  d: unknown;
}

/** Input of `userSays`: a user message dispatched as MESSAGE_CREATE. */
export interface UserMessageInput {
  /** Channel (guild text channel, thread or DM channel id). */
  channelId: string;
  content: string;
  /** Author user id. @defaultValue alice */
  authorId?: string;
  /** Id of a message this one replies to. */
  replyTo?: string;
  attachments?: {
    fileName: string;
    data: Buffer;
    contentType: string;
    declaredSize?: number;
    voice?: boolean;
  }[];
  /** Extra fields merged over the built payload (malformed payload tests). */
  overrides?: Json;
}
