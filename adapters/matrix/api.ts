/**
 * The few Client-Server calls the adapter makes itself, through matrix-js-sdk's HTTP layer (auth header,
 * error parsing) but without its local-echo send queue: `PUT /send` with our own transaction ids (so an
 * outbox retry is idempotent at the homeserver), redactions, typing, join, leave, account data. With
 * encryption on, an event for an encrypted room goes through the SDK's `sendEvent` instead, which
 * encrypts it (sharing the room key with the members' devices first) and still uses our transaction id.
 * Every call has a deadline (an unref'd `AbortSignal.timeout`, which keeps no process alive).
 */
import { createHash } from "node:crypto";
import { type MatrixClient, Method } from "matrix-js-sdk";
import { toPlatformError } from "./errors.js";

/** @defaultValue 30 s */
const CALL_TIMEOUT_MS = 30_000;

const enc = encodeURIComponent;

/**
 * A transaction id from a stable key and a part index: the same outbox item and chunk always map to the
 * same id, so the homeserver answers a retry with the first event instead of posting again.
 */
export function txnIdFor(key: string, part: number | string): string {
  const safe = /^[A-Za-z0-9._~-]{1,80}$/.test(key)
    ? key
    : createHash("sha256").update(key).digest("hex").slice(0, 40);
  return `herald.${safe}.${part}`;
}

/** Calls on one logged-in client. Methods throw PlatformError (retryable where a retry may help). */
export class MatrixApi {
  constructor(
    private readonly client: MatrixClient,
    private readonly userId: string,
    /** Whether the client runs Rust crypto (events for encrypted rooms are encrypted). */
    private readonly encrypting = false,
  ) {}

  private async call<T>(
    what: string,
    method: Method,
    path: string,
    body?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<T> {
    const deadline = AbortSignal.timeout(CALL_TIMEOUT_MS);
    try {
      return (await this.client.http.authedRequest<T>(method, path, undefined, body, {
        abortSignal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      })) as T;
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }

  /** Sends one event; returns its event id. */
  async sendEvent(
    roomId: string,
    type: string,
    content: Record<string, unknown>,
    txnId: string,
    signal?: AbortSignal,
  ): Promise<string> {
    if (this.encrypting && this.client.getRoom(roomId)?.hasEncryptionStateEvent()) {
      return this.sendEncrypted(roomId, type, content, txnId, signal);
    }
    const res = await this.call<{ event_id?: unknown }>(
      "Sending a message",
      Method.Put,
      `/rooms/${enc(roomId)}/send/${enc(type)}/${enc(txnId)}`,
      content,
      signal,
    );
    if (typeof res?.event_id !== "string")
      throw toPlatformError(new Error("no event_id in the answer"), "Sending a message");
    return res.event_id;
  }

  /** Encrypts and sends through the SDK (room key shared with the members' devices first). */
  private async sendEncrypted(
    roomId: string,
    type: string,
    content: Record<string, unknown>,
    txnId: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const deadline = AbortSignal.timeout(CALL_TIMEOUT_MS);
    const abort = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abort.reason);
      abort.addEventListener("abort", onAbort, { once: true });
    });
    try {
      // The SDK's typed overloads know only the spec's event types; ours are plain content.
      const send = this.client.sendEvent as unknown as (
        roomId: string,
        type: string,
        content: Record<string, unknown>,
        txnId: string,
      ) => Promise<{ event_id: string }>;
      const res = await Promise.race([send.call(this.client, roomId, type, content, txnId), aborted]);
      return res.event_id;
    } catch (err) {
      throw toPlatformError(err, "Sending an encrypted message");
    } finally {
      if (onAbort) abort.removeEventListener("abort", onAbort);
    }
  }

  async redact(roomId: string, eventId: string, txnId: string): Promise<void> {
    await this.call(
      "Deleting a message",
      Method.Put,
      `/rooms/${enc(roomId)}/redact/${enc(eventId)}/${enc(txnId)}`,
      {},
    );
  }

  async typing(roomId: string, typing: boolean, timeoutMs: number): Promise<void> {
    await this.call(
      "Sending typing",
      Method.Put,
      `/rooms/${enc(roomId)}/typing/${enc(this.userId)}`,
      typing ? { typing, timeout: timeoutMs } : { typing },
    );
  }

  async join(roomId: string): Promise<void> {
    await this.call("Joining a room", Method.Post, `/join/${enc(roomId)}`, {});
  }

  async leave(roomId: string): Promise<void> {
    await this.call("Leaving a room", Method.Post, `/rooms/${enc(roomId)}/leave`, {});
  }

  async setAccountData(type: string, content: Record<string, unknown>): Promise<void> {
    await this.call(
      "Saving account data",
      Method.Put,
      `/user/${enc(this.userId)}/account_data/${enc(type)}`,
      content,
    );
  }

  /** One event by id (to learn who wrote the message a reply points at). */
  async fetchEvent(roomId: string, eventId: string): Promise<{ sender?: unknown }> {
    return this.call("Fetching an event", Method.Get, `/rooms/${enc(roomId)}/event/${enc(eventId)}`);
  }
}

/**
 * Two fixes to matrix-js-sdk's requests, made where they all pass (`http.authedRequest`):
 *
 * - Every request with a local timeout (each `/sync` long poll: poll time + 80 s) gets a plain
 *   `setTimeout` that is never cleared, so a stopped client keeps the process alive for up to two
 *   minutes. Those timeouts become `AbortSignal.timeout`, whose timer is unref'd; the request is cut off
 *   at the same moment either way.
 * - A request's promise is marked handled. Resuming from a saved sync, the SDK reports itself prepared
 *   while its startup is still in flight, then sends its first `/sync` and awaits it only if it is still
 *   running: stopped meanwhile, that request fails with an AbortError nobody awaits, an unhandled
 *   rejection that ends a Node process. The SDK still sees every rejection it does await.
 */
export function guardSdkRequests(client: MatrixClient): void {
  const http = client.http;
  const original = http.authedRequest.bind(http);
  const handled = <T>(request: Promise<T>): Promise<T> => {
    request.catch(() => undefined);
    return request;
  };
  http.authedRequest = ((...args: Parameters<typeof original>) => {
    const [method, path, query, body, opts] = args;
    if (opts?.localTimeoutMs === undefined) return handled(original(...args));
    const { localTimeoutMs, ...rest } = opts;
    const deadline = AbortSignal.timeout(localTimeoutMs);
    const abortSignal = rest.abortSignal ? AbortSignal.any([rest.abortSignal, deadline]) : deadline;
    return handled(original(method, path, query, body, { ...rest, abortSignal }));
  }) as typeof http.authedRequest;
}
