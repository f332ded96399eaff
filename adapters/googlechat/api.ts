/**
 * The Chat REST API calls Herald makes (`spaces.messages.create`, `patch`, `delete`, `media.download`),
 * each with the app's access token, and their failures as `PlatformError`s: 429 retryable with the
 * server's Retry-After, 401 final (refused credentials), 403/404 final, 5xx and no answer retryable.
 * A message created with a client-assigned id (`client-…`, derived from the outbox item) is created
 * once: a retry that finds it already there (409) takes it as sent.
 */
import { createHash } from "node:crypto";
import type { JWT } from "google-auth-library";
import { PlatformError } from "../../core/errors.js";
import { accessToken } from "./auth.js";

/** The body of a message Herald writes. */
export interface ChatMessageBody {
  text: string;
  cardsV2?: object[] | undefined;
  thread?: { name: string } | undefined;
}

/** A client-assigned message id for chunk `index` of an outbox item (Chat: `client-` + ≤ 56 of [a-z0-9-]). */
export function clientMessageId(idempotencyKey: string, index: number): string {
  return `client-${createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 40)}-${index}`;
}

/** Calls to the Chat REST API. */
export class ChatApi {
  constructor(
    private readonly apiUrl: string,
    private readonly credentials: JWT,
  ) {}

  private async request(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<Response> {
    const token = await accessToken(this.credentials);
    let res: Response;
    try {
      res = await fetch(`${this.apiUrl.replace(/\/+$/, "")}/${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { "content-type": "application/json" } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
        signal: signal ?? AbortSignal.timeout(30_000),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new PlatformError("googlechat", `The Chat API at ${this.apiUrl} did not answer.`, {
        cause: err,
        retryable: true,
      });
    }
    if (res.status === 401) this.credentials.credentials = {};
    return res;
  }

  private async json<T>(
    method: string,
    path: string,
    what: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    const res = await this.request(method, path, body, signal);
    if (!res.ok) throw await apiError(res, what);
    return (await res.json().catch(() => ({}))) as T;
  }

  /** Creates a message in a space (in `thread` when given); resolves to its resource name. */
  async create(
    space: string,
    message: ChatMessageBody,
    clientId?: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const query = new URLSearchParams({ messageReplyOption: "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD" });
    if (clientId) query.set("messageId", clientId);
    const res = await this.request("POST", `v1/${space}/messages?${query}`, message, signal);
    if (res.status === 409 && clientId) return `${space}/messages/${clientId}`;
    if (!res.ok) throw await apiError(res, `spaces.messages.create in ${space}`);
    return ((await res.json()) as { name: string }).name;
  }

  /** Replaces a message's text and cards (none: the buttons go). */
  async update(name: string, message: ChatMessageBody): Promise<void> {
    await this.json("PATCH", `v1/${name}?updateMask=text,cardsV2`, `spaces.messages.patch of ${name}`, {
      text: message.text,
      cardsV2: message.cardsV2 ?? [],
    });
  }

  /** Deletes a message; one already gone is not an error. */
  async delete(name: string): Promise<void> {
    const res = await this.request("DELETE", `v1/${name}`);
    if (!res.ok && res.status !== 404) throw await apiError(res, `spaces.messages.delete of ${name}`);
  }

  /** The bytes of an uploaded attachment (`media.download`). */
  async download(resourceName: string): Promise<Response> {
    const res = await this.request("GET", `v1/media/${resourceName}?alt=media`);
    if (!res.ok) throw await apiError(res, "media.download");
    return res;
  }
}

/** A failed call as a PlatformError. */
export async function apiError(res: Response, what: string): Promise<PlatformError> {
  const body = (await res.json().catch(() => ({}))) as { error?: { status?: string; message?: string } };
  const reason = [body.error?.status, body.error?.message].filter(Boolean).join(": ") || `HTTP ${res.status}`;
  if (res.status === 429) {
    const seconds = Number(res.headers.get("retry-after"));
    return new PlatformError("googlechat", `Google Chat rate-limited ${what} (${reason}).`, {
      code: "platform_rate_limited",
      retryable: true,
      ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}),
    });
  }
  if (res.status === 401) {
    return new PlatformError(
      "googlechat",
      `Google Chat refused the app's credentials for ${what} (${reason}). Fix: check GOOGLE_CHAT_SERVICE_ACCOUNT is the Chat app's service account and the Chat API is enabled in its project.`,
      { code: "platform_auth_failed" },
    );
  }
  return new PlatformError("googlechat", `Google Chat answered ${res.status} to ${what} (${reason}).`, {
    retryable: res.status >= 500,
  });
}
