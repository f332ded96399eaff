/**
 * The Open API through `@larksuiteoapi/node-sdk`'s `Client`: it fetches the tenant access token
 * (`auth/v3/tenant_access_token/internal`) and caches it in a cache of this adapter's own (the SDK's
 * default is process-wide); a call refused for an expired or invalid token empties the cache and is
 * made once more with a fresh one. Failures become `PlatformError`s: HTTP 429 / code 99991400 is a rate
 * limit with the wait of `x-ogw-ratelimit-reset`, refused credentials are final, 5xx and network
 * failures retryable. The SDK's own logger is silenced: its lines hold request configs with tokens.
 */
import { Client, LoggerLevel } from "@larksuiteoapi/node-sdk";
import { PlatformError } from "../../core/errors.js";

/** Codes of a tenant token the server no longer takes (expired, invalid, missing). */
const TOKEN_CODES = new Set([99991661, 99991663, 99991668, 99991677]);
/** Codes of refused app credentials (wrong App ID / Secret, app disabled). */
const AUTH_CODES = new Set([10003, 10014, 99991543, 99991664, 99991665]);
const RATE_CODES = new Set([99991400, 11232, 230020]);

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {} };

/** A Map-backed token cache honouring the SDK's expiry (epoch ms). */
class TokenCache {
  private readonly map = new Map<string, { value: unknown; expireAt: number | undefined }>();
  private key = (key: unknown, ns?: string) => `${ns ?? ""}:${String(key)}`;
  async set(key: unknown, value: unknown, expire?: number, options?: { namespace?: string }) {
    this.map.set(this.key(key, options?.namespace), { value, expireAt: expire });
    return true;
  }
  async get(key: unknown, options?: { namespace?: string }) {
    const hit = this.map.get(this.key(key, options?.namespace));
    if (!hit || (hit.expireAt !== undefined && hit.expireAt < Date.now())) return undefined;
    return hit.value;
  }
  clear() {
    this.map.clear();
  }
}

/** What an SDK (axios) failure carries. */
interface HttpFailure {
  response?: { status?: number; data?: unknown; headers?: Record<string, unknown> };
  code?: string;
  message?: string;
}

/** The Open API of one app. */
export class FeishuApi {
  readonly client: Client;
  private readonly cache = new TokenCache();

  constructor(appId: string, appSecret: string, apiUrl: string) {
    this.client = new Client({
      appId,
      appSecret,
      domain: apiUrl.replace(/\/+$/, ""),
      cache: this.cache,
      logger: silent,
      loggerLevel: LoggerLevel.error,
    });
  }

  /**
   * Runs one SDK call; a response with a non-zero `code` and every thrown failure become a
   * `PlatformError`. A stale token is refreshed once.
   */
  async call<T>(what: string, run: (client: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let failure: PlatformError;
      try {
        const out = await run(this.client);
        const code = (out as { code?: unknown } | null)?.code;
        if (typeof code !== "number" || code === 0) return out;
        failure = feishuError(what, { response: { status: 200, data: out } });
      } catch (err) {
        failure = err instanceof PlatformError ? err : feishuError(what, err as HttpFailure);
      }
      if (attempt === 0 && (failure as { staleToken?: boolean }).staleToken) {
        this.cache.clear();
        continue;
      }
      throw failure;
    }
  }
}

/** A failed call as a `PlatformError` (never with a token in it). */
export function feishuError(what: string, err: HttpFailure): PlatformError {
  const tokenRefused = /failed to get tenant_access_token, code: (\d+)/.exec(err.message ?? "");
  if (tokenRefused)
    err = {
      response: { status: 400, data: { code: 10014, msg: `token refused (code ${tokenRefused[1]})` } },
    };
  const status = err.response?.status;
  const data = (err.response?.data ?? {}) as { code?: number; msg?: string };
  const code = typeof data.code === "number" ? data.code : undefined;
  const detail = `${what} failed (${status ? `HTTP ${status}` : (err.code ?? err.message ?? "no answer")}${code !== undefined ? `, code ${code}: ${data.msg ?? ""}` : ""})`;
  if (status === 429 || (code !== undefined && RATE_CODES.has(code))) {
    const reset = Number(err.response?.headers?.["x-ogw-ratelimit-reset"]);
    return new PlatformError("feishu", `Feishu is rate limiting Herald: ${detail}`, {
      code: "platform_rate_limited",
      retryable: true,
      retryAfterMs: Number.isFinite(reset) && reset > 0 ? reset * 1000 : 1000,
    });
  }
  if (code !== undefined && TOKEN_CODES.has(code)) {
    const stale = new PlatformError("feishu", `Feishu refused the tenant access token: ${detail}`, {
      code: "platform_auth_failed",
    });
    return Object.assign(stale, { staleToken: true });
  }
  if (status === 401 || (code !== undefined && AUTH_CODES.has(code))) {
    return new PlatformError(
      "feishu",
      `Feishu refused FEISHU_APP_ID / FEISHU_APP_SECRET: ${detail}. Fix: copy both again from the Developer Console (Credentials & Basic Info).`,
      { code: "platform_auth_failed" },
    );
  }
  const retryable = status === undefined || status >= 500;
  return new PlatformError("feishu", `Feishu: ${detail}`, { retryable });
}
