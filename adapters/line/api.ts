/**
 * The Messaging API through `@line/bot-sdk`'s clients (pointed at `apiUrl` / `dataUrl`), with its
 * failures as `PlatformError`s: 429 retryable with the wait LINE names (`Retry-After`, when it sends
 * one), 401/403 final (the token), other 4xx final, 5xx and network faults retryable.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { HTTPFetchError, messagingApi } from "@line/bot-sdk";
import { PlatformError } from "../../core/errors.js";

/** The bot as `GET /v2/bot/info` describes it. */
export interface LineBot {
  userId: string;
  basicId: string;
  displayName: string;
}

/** A UUID (as `X-Line-Retry-Key` wants) derived from `key`: the same key, the same UUID. */
export function retryKey(key: string): string {
  const h = createHash("sha256").update(key).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A thrown SDK or network error as a PlatformError; `what` names the call. */
export function lineError(err: unknown, what: string): PlatformError {
  if (err instanceof PlatformError) return err;
  if (!(err instanceof HTTPFetchError)) {
    return new PlatformError("line", `LINE did not answer ${what}: ${(err as Error).message}`, {
      cause: err,
      retryable: true,
    });
  }
  const detail = lineMessage(err.body);
  if (err.status === 429) {
    const seconds = Number(err.headers.get("retry-after"));
    return new PlatformError("line", `LINE rate-limited ${what}: ${detail}`, {
      code: "platform_rate_limited",
      retryable: true,
      ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}),
    });
  }
  if (err.status === 401 || err.status === 403) {
    return new PlatformError(
      "line",
      `LINE refused LINE_CHANNEL_ACCESS_TOKEN (${err.status}) on ${what}: ${detail}. Issue a new long-lived channel access token in the LINE Developers console (Messaging API tab).`,
      { code: "platform_auth_failed" },
    );
  }
  return new PlatformError("line", `LINE answered ${err.status} to ${what}: ${detail}`, {
    retryable: err.status >= 500,
  });
}

function lineMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: the raw text below.
  }
  return body.slice(0, 200);
}

/** LINE's two API hosts behind one small surface. */
export class LineApi {
  private readonly client: messagingApi.MessagingApiClient;
  private readonly blob: messagingApi.MessagingApiBlobClient;

  constructor(token: string, apiUrl: string, dataUrl: string) {
    this.client = new messagingApi.MessagingApiClient({ channelAccessToken: token, baseURL: apiUrl });
    this.blob = new messagingApi.MessagingApiBlobClient({ channelAccessToken: token, baseURL: dataUrl });
  }

  async botInfo(): Promise<LineBot> {
    const info = await this.client.getBotInfo().catch((err: unknown) => {
      throw lineError(err, "GET /v2/bot/info");
    });
    return { userId: info.userId, basicId: info.basicId, displayName: info.displayName };
  }

  /** Replies with the one-use token; resolves to the sent message ids. */
  async reply(replyToken: string, messages: messagingApi.Message[]): Promise<string[]> {
    const res = await this.client.replyMessage({ replyToken, messages }).catch((err: unknown) => {
      throw lineError(err, "the reply");
    });
    return res.sentMessages.map((m) => m.id);
  }

  /**
   * Pushes to a user, group or room. The retry key makes a retried push land once: LINE answers a key
   * it already accepted with 409 and the accepted request's id, which counts as sent.
   */
  async push(to: string, messages: messagingApi.Message[], key: string): Promise<string[]> {
    try {
      const res = await this.client.pushMessage({ to, messages }, retryKey(key));
      return res.sentMessages.map((m) => m.id);
    } catch (err) {
      const accepted =
        err instanceof HTTPFetchError && err.status === 409 && err.headers.get("x-line-accepted-request-id");
      if (accepted) return [accepted];
      throw lineError(err, "the push");
    }
  }

  /** The content of a message the user sent (image, video, audio, file). */
  async content(messageId: string): Promise<{ body: Readable; mimeType: string | undefined }> {
    const res = await this.blob.getMessageContentWithHttpInfo(messageId).catch((err: unknown) => {
      throw lineError(err, "the content download");
    });
    return { body: res.body, mimeType: res.httpResponse.headers.get("content-type") ?? undefined };
  }

  /** The loading animation in a 1:1 chat (LINE's "typing…"). */
  async loading(chatId: string, seconds: number): Promise<void> {
    await this.client.showLoadingAnimation({ chatId, loadingSeconds: seconds });
  }
}
