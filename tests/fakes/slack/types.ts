/**
 * Types of the fake Slack (Web API, file hosting, Socket Mode) used by the Slack adapter's tests.
 */

export interface FakeSlackOptions {
  /** @defaultValue "xoxb-1111-2222-faketoken" */
  botToken?: string;
  /** @defaultValue "xapp-1-A0001-3333-fakeapptoken" */
  appToken?: string;
  /** @defaultValue "UHERALD01" */
  botUserId?: string;
  /** @defaultValue "BHERALD01" */
  botId?: string;
  /** @defaultValue "T0FAKE001" */
  teamId?: string;
  /** Sent as `x-oauth-scopes` on every answer, like Slack does; absent: no header. */
  scopes?: string[];
  /** Profiles `users.info` knows. */
  users?: Record<string, { name: string; displayName?: string; realName?: string }>;
}

/** One Web API call the fake received (faulted ones included). */
export interface FakeSlackCall {
  method: string;
  /** Form or JSON arguments; JSON-encoded form values (`files`, `blocks`) are decoded. */
  args: Record<string, unknown>;
  /** The bearer token (header or `token` argument). */
  token: string | undefined;
}

/** A fault to inject into the next call(s) of a method. */
export type FakeSlackFault =
  /** HTTP 429 with `Retry-After`. */
  | { kind: "rate_limit"; retryAfterSec: number }
  /** An HTTP status without a Slack body (5xx). */
  | { kind: "http"; status: number }
  /** `{ ok: false, error }` as Slack sends it, e.g. `missing_scope` with `needed`. */
  | { kind: "error"; error: string; needed?: string }
  /** Answer normally, after a delay. */
  | { kind: "slow"; delayMs: number }
  /** HTTP 200 with a body that is not JSON. */
  | { kind: "malformed" };

/** A file Slack accepted through `files.getUploadURLExternal` → upload → `files.completeUploadExternal`. */
export interface FakeSlackUpload {
  fileId: string;
  filename: string;
  bytes: Buffer;
  channelId?: string;
  threadTs?: string;
  initialComment?: string;
}

/** The file object of a message event, as Slack shows a file hosted by the fake. */
export interface FakeSlackFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  size: number;
  mode: string;
  url_private: string;
  url_private_download: string;
}

/** A message the bot posted, as it stands now. */
export interface FakeSlackMessage {
  channel: string;
  ts: string;
  threadTs?: string | undefined;
  text: string;
  /** Block Kit blocks; empty when none (or removed by an update). */
  blocks: Record<string, unknown>[];
}

/** One Socket Mode envelope the fake pushed. `acked` resolves when the client acknowledged it. */
export interface FakeSlackEnvelope {
  envelopeId: string;
  acked: Promise<void>;
  isAcked(): boolean;
}

export interface FakeSlack {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `http://127.0.0.1:PORT/api/` (SLACK_API_URL) */
  apiUrl: string;
  botToken: string;
  appToken: string;
  botUserId: string;
  botId: string;
  teamId: string;
  /** Every Web API call, in order. */
  calls: FakeSlackCall[];
  callsOf(method: string): FakeSlackCall[];
  /** Resolves with the first call of `method` (matching `where`) once it arrived. */
  waitForCall(
    method: string,
    where?: (call: FakeSlackCall) => boolean,
    timeoutMs?: number,
  ): Promise<FakeSlackCall>;
  /** Faults the next `times` calls of `method`. */
  inject(method: string, fault: FakeSlackFault, times?: number): void;
  /** From now on the bot token is refused with `token_revoked`. */
  revokeBotToken(): void;
  /** Hosts a file for download (needs the bot token) and returns it as a message event shows it. */
  hostFile(file: { name: string; content: Buffer | string; mimetype: string; size?: number }): FakeSlackFile;
  /** File downloads the fake served or refused: the path and whether the bot token came with it. */
  downloads: { path: string; authorized: boolean }[];
  uploads: FakeSlackUpload[];
  /** Socket Mode: WebSocket connections opened so far. */
  connectionCount(): number;
  waitForConnections(count: number, timeoutMs?: number): Promise<void>;
  /**
   * Socket Mode: sends an envelope carrying `body` on the open connection: `events_api` (default), or
   * `interactive` for an interactivity payload (a button click).
   */
  pushEvent(
    body: object,
    options?: { retryAttempt?: number; retryReason?: string; type?: "events_api" | "interactive" },
  ): FakeSlackEnvelope;
  /** The bot's messages (chat.postMessage), with chat.update applied, in order. */
  messages: FakeSlackMessage[];
  /** Socket Mode: asks the client to reconnect (`{type:"disconnect"}`), as Slack does before a refresh. */
  requestReconnect(): void;
  /** Socket Mode: drops the connection without a close handshake (network failure). */
  dropConnection(): void;
  close(): Promise<void>;
}
