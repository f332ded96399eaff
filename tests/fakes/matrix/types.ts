/**
 * Types of the fake Matrix homeserver: the events it stores (Client-Server API shapes), what it records
 * of each request, and the faults a test can inject.
 */

/** An event as the homeserver stores it: the wire shape plus where it sits in the stream. */
export interface StoredEvent {
  type: string;
  event_id: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string | undefined;
  /** Position in the server's global stream (the `since` tokens count these). */
  pos: number;
  roomId: string;
  /** The `txnId` of the PUT that created it, shown back to the same device as `unsigned.transaction_id`. */
  txnId?: string | undefined;
}

/** One HTTP request the fake received. */
export interface RecordedRequest {
  method: string;
  /** Path without the query, URL-decoded (`/_matrix/client/v3/rooms/!a:localhost/send/...`). */
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** The bearer token's owner, when the request carried a valid token. */
  userId?: string | undefined;
  at: number;
}

/** A message-like event the bot sent through `PUT /rooms/{room}/send/{type}/{txnId}`. */
export interface SentEvent {
  roomId: string;
  eventId: string;
  type: string;
  txnId: string;
  content: Record<string, unknown>;
}

/** One typing notification the bot sent. */
export interface TypingCall {
  roomId: string;
  typing: boolean;
  timeoutMs?: number | undefined;
}

/**
 * A fault for the next request(s) matching `method` and `path`: an error answer, a malformed body, or a
 * delay before the real answer.
 */
export interface FaultSpec {
  method?: string | undefined;
  /** Matched against the decoded path (substring or RegExp). */
  path: string | RegExp;
  /** HTTP status to answer with instead of the real handler. Omit with `delayMs` for a slow real answer. */
  status?: number | undefined;
  body?: unknown;
  /** Answer with this raw text (malformed JSON, HTML error pages). */
  rawBody?: string | undefined;
  headers?: Record<string, string> | undefined;
  delayMs?: number | undefined;
  /** How many matching requests it applies to. @defaultValue 1 */
  times?: number | undefined;
}

/** Options of `startFakeHomeserver`. */
export interface FakeHomeserverOptions {
  /** The server name in ids. @defaultValue "localhost" */
  serverName?: string | undefined;
  /** The bot's localpart. @defaultValue "herald" */
  botLocalpart?: string | undefined;
  /** @defaultValue "Herald" */
  botDisplayName?: string | undefined;
  /** The password `POST /login` accepts for the bot. @defaultValue "bot-password" */
  botPassword?: string | undefined;
  /** An access token valid from the start. @defaultValue "syt_bot_token" */
  botAccessToken?: string | undefined;
  /** Cap on how long a `/sync` long poll is held, whatever `timeout` asks. @defaultValue 30000 */
  maxSyncHoldMs?: number | undefined;
}

/** Options of `createRoom`. */
export interface RoomSpec {
  /** Users joined besides the bot (full ids). */
  members: string[];
  name?: string | undefined;
  /** Creator; defaults to the first member. */
  creator?: string | undefined;
  /** The bot's membership: joined already, invited (by the creator), or not in the room. @defaultValue "join" */
  bot?: "join" | "invite" | "none" | undefined;
  /** Put the room in the bot's `m.direct` account data (for the first member). */
  direct?: boolean | undefined;
  /** The invite carries `is_direct: true` (clients do this for DMs). */
  isDirectInvite?: boolean | undefined;
  /** The room has `m.room.encryption` state. */
  encrypted?: boolean | undefined;
}
