/**
 * WeCom's server API (`/cgi-bin/…`) with `fetch`: the access token from `gettoken` (Corp ID + app
 * Secret), cached until five minutes before its `expires_in`; a call answered 42001 (expired) or 40014
 * (invalid) fetches a new one and is made once more. Answers carry `errcode`: refused credentials are
 * final, frequency limits (45009, 45011, 45033) and "system busy" (-1) retryable, an HTTP 429 waits
 * its `Retry-After`. Tokens go in the query string and never into a log or an error.
 */
import { PlatformError } from "../../core/errors.js";

const TOKEN_CODES = new Set([40014, 42001, 41001]);
const AUTH_CODES = new Set([40001, 40013, 40056, 40091, 48002, 60020]);
const RATE_CODES = new Set([45009, 45011, 45033]);

/** A WeCom answer: `errcode` 0 and the method's fields. */
export type WecomAnswer = Record<string, unknown> & { errcode?: number; errmsg?: string };

/** The API of one app. */
export class WecomApi {
  private token: { value: string; expiresAt: number } | undefined;
  private fetching: Promise<string> | undefined;

  constructor(
    private readonly base: string,
    private readonly corpId: string,
    private readonly secret: string,
  ) {}

  /** The cached access token, or a new one. */
  accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now()) return Promise.resolve(this.token.value);
    this.fetching ??= this.fetchToken().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  private async fetchToken(): Promise<string> {
    const url = `${this.base}/cgi-bin/gettoken?corpid=${encodeURIComponent(this.corpId)}&corpsecret=${encodeURIComponent(this.secret)}`;
    const answer = await this.fetchJson("gettoken", url, {});
    if (answer.errcode || typeof answer["access_token"] !== "string") {
      throw new PlatformError(
        "wecom",
        `WeCom refused WECOM_CORP_ID / WECOM_SECRET (gettoken errcode ${answer.errcode}: ${answer.errmsg ?? ""}). Fix: copy the Corp ID (My Company) and the app's Secret (App Management → the app) again.`,
        { code: "platform_auth_failed" },
      );
    }
    const expiresInSec = Number(answer["expires_in"] ?? 7200);
    this.token = {
      value: answer["access_token"],
      expiresAt: Date.now() + Math.max(60, expiresInSec - 300) * 1000,
    };
    return this.token.value;
  }

  /** Calls `/cgi-bin/<method>` with the token (POST with a JSON body, GET without). */
  async call(method: string, body?: object, signal?: AbortSignal): Promise<WecomAnswer> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      const url = `${this.base}/cgi-bin/${method}${method.includes("?") ? "&" : "?"}access_token=${encodeURIComponent(token)}`;
      const init: RequestInit = body
        ? {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
            signal,
          }
        : { signal };
      const answer = await this.fetchJson(method, url, init);
      if (answer.errcode && TOKEN_CODES.has(answer.errcode) && attempt === 0) {
        this.token = undefined;
        continue;
      }
      if (answer.errcode) throw wecomError(method, answer);
      return answer;
    }
  }

  /** Uploads a file as temporary media (`media/upload`, 3 days); its `media_id`. */
  async upload(
    type: "image" | "file" | "voice",
    name: string,
    bytes: Uint8Array<ArrayBuffer>,
  ): Promise<string> {
    const form = new FormData();
    form.append("media", new Blob([bytes]), name);
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      const url = `${this.base}/cgi-bin/media/upload?access_token=${encodeURIComponent(token)}&type=${type}`;
      const answer = await this.fetchJson("media/upload", url, { method: "POST", body: form });
      if (answer.errcode && TOKEN_CODES.has(answer.errcode) && attempt === 0) {
        this.token = undefined;
        continue;
      }
      if (answer.errcode || typeof answer["media_id"] !== "string") throw wecomError("media/upload", answer);
      return answer["media_id"];
    }
  }

  /** Downloads temporary media (`media/get`): the response, its body unread. */
  async download(mediaId: string): Promise<Response> {
    const token = await this.accessToken();
    const url = `${this.base}/cgi-bin/media/get?access_token=${encodeURIComponent(token)}&media_id=${encodeURIComponent(mediaId)}`;
    const res = await fetch(url).catch((err: unknown) => {
      throw new PlatformError("wecom", "WeCom media/get did not answer", { cause: err, retryable: true });
    });
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      const answer = (await res.json()) as WecomAnswer;
      if (answer.errcode && TOKEN_CODES.has(answer.errcode)) this.token = undefined;
      throw wecomError("media/get", answer);
    }
    if (!res.ok)
      throw new PlatformError("wecom", `WeCom media/get answered HTTP ${res.status}`, {
        retryable: res.status >= 500,
      });
    return res;
  }

  private async fetchJson(what: string, url: string, init: RequestInit): Promise<WecomAnswer> {
    let res: Response;
    try {
      res = await fetch(url, init);
    } catch (err) {
      throw new PlatformError("wecom", `WeCom ${what} did not answer (${(err as Error).message})`, {
        cause: err,
        retryable: true,
      });
    }
    if (res.status === 429) {
      const wait = Number(res.headers.get("retry-after"));
      throw new PlatformError("wecom", `WeCom ${what} answered 429`, {
        code: "platform_rate_limited",
        retryable: true,
        ...(Number.isFinite(wait) && wait > 0 ? { retryAfterMs: wait * 1000 } : {}),
      });
    }
    if (!res.ok)
      throw new PlatformError("wecom", `WeCom ${what} answered HTTP ${res.status}`, {
        retryable: res.status >= 500,
      });
    return (await res.json()) as WecomAnswer;
  }
}

/** A non-zero `errcode` as a `PlatformError`. */
export function wecomError(method: string, answer: WecomAnswer): PlatformError {
  const code = answer.errcode ?? 0;
  const detail = `WeCom ${method} failed (errcode ${code}: ${answer.errmsg ?? ""})`;
  if (RATE_CODES.has(code))
    return new PlatformError("wecom", detail, { code: "platform_rate_limited", retryable: true });
  if (AUTH_CODES.has(code) || TOKEN_CODES.has(code)) {
    return new PlatformError("wecom", `${detail}. Fix: check WECOM_SECRET and the app's visible range.`, {
      code: "platform_auth_failed",
    });
  }
  return new PlatformError("wecom", detail, { retryable: code === -1 });
}
