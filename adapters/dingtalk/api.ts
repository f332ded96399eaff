/**
 * DingTalk's OpenAPI (`api.dingtalk.com/v1.0/…`) with `fetch`: the app access token from
 * `oauth2/accessToken` (Client ID + Secret), kept until five minutes before it expires and fetched again
 * when a call is answered 401 (the call is then made once more). Failures become `PlatformError`s:
 * throttling (HTTP 429, or a `QpsLimit`/`Throttling` code) is retryable with the `Retry-After` wait,
 * refused credentials are final, 5xx retryable. The token travels in `x-acs-dingtalk-access-token` and
 * never into a log.
 */
import { PlatformError } from "../../core/errors.js";

/** An OpenAPI answer body. */
export type DingtalkAnswer = Record<string, unknown>;

/** The OpenAPI of one app. */
export class DingtalkApi {
  private token: { value: string; expiresAt: number } | undefined;
  private fetching: Promise<string> | undefined;

  constructor(
    readonly base: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
  ) {}

  accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now()) return Promise.resolve(this.token.value);
    this.fetching ??= this.fetchToken().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  private async fetchToken(): Promise<string> {
    const res = await this.fetch("oauth2/accessToken", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ appKey: this.clientId, appSecret: this.clientSecret }),
    });
    const body = (await res.json().catch(() => ({}))) as DingtalkAnswer;
    if (!res.ok || typeof body["accessToken"] !== "string") {
      if (res.status >= 500)
        throw new PlatformError("dingtalk", `DingTalk oauth2/accessToken answered HTTP ${res.status}`, {
          retryable: true,
        });
      throw new PlatformError(
        "dingtalk",
        `DingTalk refused DINGTALK_CLIENT_ID / DINGTALK_CLIENT_SECRET (HTTP ${res.status}, ${String(body["code"] ?? "")}). Fix: copy both again from the app's Credentials & Basic Info page in the developer console.`,
        { code: "platform_auth_failed" },
      );
    }
    const expireInSec = Number(body["expireIn"] ?? 7200);
    this.token = {
      value: body["accessToken"],
      expiresAt: Date.now() + Math.max(60, expireInSec - 300) * 1000,
    };
    return this.token.value;
  }

  /** Calls `/v1.0/<path>` with the token and a JSON body. */
  async call(
    path: string,
    body: object,
    options: { method?: string; signal?: AbortSignal | undefined } = {},
  ): Promise<DingtalkAnswer> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      const res = await this.fetch(path, {
        method: options.method ?? "POST",
        headers: { "content-type": "application/json", "x-acs-dingtalk-access-token": token },
        body: JSON.stringify(body),
        signal: options.signal,
      });
      const answer = (await res.json().catch(() => ({}))) as DingtalkAnswer;
      if (res.status === 401 && attempt === 0) {
        this.token = undefined;
        continue;
      }
      if (!res.ok) throw dingtalkError(path, res, answer);
      return answer;
    }
  }

  private async fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${this.base}/v1.0/${path}`, init);
    } catch (err) {
      throw new PlatformError("dingtalk", `DingTalk ${path} did not answer (${(err as Error).message})`, {
        cause: err,
        retryable: true,
      });
    }
  }
}

/** A refused call as a `PlatformError`. */
export function dingtalkError(path: string, res: Response, answer: DingtalkAnswer): PlatformError {
  const code = String(answer["code"] ?? "");
  const detail = `DingTalk ${path} failed (HTTP ${res.status}${code ? `, ${code}` : ""}: ${String(answer["message"] ?? "")})`;
  if (res.status === 429 || /QpsLimit|Throttling|FlowControl/i.test(code)) {
    const wait = Number(res.headers.get("retry-after"));
    return new PlatformError("dingtalk", detail, {
      code: "platform_rate_limited",
      retryable: true,
      retryAfterMs: Number.isFinite(wait) && wait > 0 ? wait * 1000 : 1000,
    });
  }
  if (res.status === 401 || (res.status === 403 && /Auth|Permission/i.test(code))) {
    return new PlatformError(
      "dingtalk",
      `${detail}. Fix: check DINGTALK_CLIENT_SECRET and the app's robot permissions.`,
      { code: "platform_auth_failed" },
    );
  }
  return new PlatformError("dingtalk", detail, { retryable: res.status >= 500 });
}
