/**
 * Types of the Matrix adapter: its config and the small facts it keeps between restarts. No
 * matrix-js-sdk type leaves this folder.
 */
import type { StreamMode } from "../shared/reply-stream.js";

/** Everything the Matrix adapter needs; `matrixConfigFrom(heraldConfig)` builds it from the gateway config. */
export interface MatrixAdapterConfig {
  /** Client-Server API base URL, e.g. `https://matrix.example.org` (no trailing slash needed). */
  homeserver: string;
  /** A bot account's access token. Either this or `userId` + `password`. */
  accessToken?: string | undefined;
  /** The bot's full user id (`@herald:example.org`); required with `password`, optional with a token. */
  userId?: string | undefined;
  /**
   * Password of `userId`. The first start logs in and keeps the token and device id in the adapter's
   * store, so later starts reuse that one device; it logs in again only when the token stops working.
   */
  password?: string | undefined;
  /**
   * Who may invite the bot into rooms: full user ids from `MATRIX_ALLOWED_USERS`, plus `matrix:@user:server`
   * entries of `GATEWAY_ALLOWED_USERS`. Invites from anyone else are declined.
   */
  allowedUsers: string[];
  /** `GATEWAY_ALLOW_ALL_USERS`: accept every invite. @defaultValue false */
  allowAllUsers?: boolean | undefined;
  /** Inbound files larger than this are not downloaded. */
  maxAttachmentBytes: number;
  /** Where inbound files are written (a subfolder `matrix/` is created). */
  cacheDir: string;
  /** Characters per message before a reply is split. @defaultValue 4000 */
  maxMessageChars?: number | undefined;
  /** How long one `/sync` long poll waits on the server. @defaultValue 30000 */
  pollTimeoutMs?: number | undefined;
  /** Device display name on a password login. @defaultValue "Herald" */
  deviceName?: string | undefined;
  /**
   * `MATRIX_STREAM`: `edit` shows a reply as it is written, one event replaced in place (`m.replace`);
   * `off` sends it whole when done. @defaultValue "edit"
   */
  stream?: StreamMode | undefined;
  /**
   * `MATRIX_ENCRYPTION`: read and answer end-to-end encrypted rooms (Rust crypto on a store under
   * `homeDir`). Off: encrypted rooms get one notice that the bot cannot read them. @defaultValue false
   */
  encryption?: boolean | undefined;
  /** `MATRIX_STORE_KEY`: passphrase for the crypto store. Unset: the store is not encrypted at rest. */
  storeKey?: string | undefined;
  /** `HERALD_HOME`, where the crypto store lives. Required with `encryption`. */
  homeDir?: string | undefined;
}

/** Login facts kept in the adapter's store (`deps.kv`, under `HERALD_HOME`). */
export interface StoredCredentials {
  homeserver: string;
  userId: string;
  accessToken: string;
  deviceId: string;
}

/** The bot's identity once logged in. */
export interface BotIdentity {
  userId: string;
  deviceId: string | undefined;
  accessToken: string;
  /** Global display name (for mention detection); undefined when the profile has none. */
  displayName: string | undefined;
}

/** Room facts `parse.ts` needs, read from the SDK's room state by the adapter. */
export interface RoomFacts {
  roomId: string;
  isDirect: boolean;
  /** The bot's display name in this room (member event), if any. */
  botRoomName?: string | undefined;
  /** Sender's display name in this room. */
  senderName?: string | undefined;
  /** Sender of the event a reply points at, when known. */
  repliedToSender?: string | undefined;
}
