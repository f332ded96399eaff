/**
 * The adapter's door to the Slack Web API: the SDK's WebClient with rate limits tracked per method and
 * channel (a 429 in one chat never delays another), and every failure turned into a PlatformError that
 * says what is wrong and how to fix it.
 */
import type { webApi } from "@slack/bolt";
import { PlatformError } from "../../core/errors.js";

type WebClient = webApi.WebClient;

/** Errors meaning the token itself is no good. */
const AUTH_ERRORS = new Set([
  "invalid_auth",
  "not_authed",
  "token_revoked",
  "token_expired",
  "account_inactive",
  "not_allowed_token_type",
  "no_permission",
  "team_access_not_granted",
]);

/** Slack-side faults worth another try. */
const TRANSIENT_ERRORS = new Set([
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
  "ratelimited",
]);

/** What Slack answered for an `ok: false` call (the fields this module reads). */
interface SlackErrorData {
  error?: string;
  needed?: string;
  response_metadata?: { retryAfter?: number };
}

function fixFor(method: string, code: string, needed?: string): string {
  if (code === "missing_scope") {
    const scope = needed ?? "the scope this method needs";
    return `Slack refused ${method}: the bot token lacks the OAuth scope ${scope}. Fix: add ${scope} under OAuth & Permissions → Bot Token Scopes in your Slack app, reinstall the app to the workspace, and set SLACK_BOT_TOKEN to the new token.`;
  }
  if (AUTH_ERRORS.has(code)) {
    return `Slack refused ${method} with ${code}: SLACK_BOT_TOKEN is not valid (revoked, expired, or not a bot token). Fix: reinstall the app under OAuth & Permissions and set SLACK_BOT_TOKEN to its xoxb- token.`;
  }
  if (code === "not_in_channel" || code === "channel_not_found") {
    return `Slack refused ${method} with ${code}: the bot is not a member of that conversation. Fix: invite the app to the channel (/invite @yourapp).`;
  }
  if (code === "is_archived") return `Slack refused ${method}: the channel is archived.`;
  return `Slack refused ${method} with ${code}.`;
}

/**
 * Maps anything the WebClient threw to a PlatformError. `retryable` is set for network faults, 5xx,
 * Slack's transient errors and 429s (with `retryAfterMs`).
 */
export function toPlatformError(method: string, err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as {
    code?: string;
    retryAfter?: number;
    statusCode?: number;
    data?: SlackErrorData;
    message?: string;
  };
  switch (e?.code) {
    case "slack_webapi_rate_limited_error": {
      const retryAfterMs = Math.max(1, e.retryAfter ?? 1) * 1000;
      return new PlatformError("slack", `Slack rate-limited ${method}; retry in ${retryAfterMs / 1000} s.`, {
        code: "platform_rate_limited",
        retryable: true,
        retryAfterMs,
        cause: err,
      });
    }
    case "slack_webapi_platform_error": {
      const code = e.data?.error ?? "unknown_error";
      if (!/^[a-z0-9_]+$/.test(code)) {
        // The WebClient puts a body that is not JSON (a proxy's error page) in `error`.
        return new PlatformError(
          "slack",
          `Slack answered ${method} with something that is not JSON; will retry.`,
          {
            retryable: true,
            cause: err,
          },
        );
      }
      const auth = code === "missing_scope" || AUTH_ERRORS.has(code);
      const retryAfter = e.data?.response_metadata?.retryAfter;
      return new PlatformError("slack", fixFor(method, code, e.data?.needed), {
        code: auth
          ? "platform_auth_failed"
          : code === "ratelimited"
            ? "platform_rate_limited"
            : "platform_error",
        retryable: TRANSIENT_ERRORS.has(code),
        ...(retryAfter ? { retryAfterMs: retryAfter * 1000 } : {}),
        cause: err,
      });
    }
    case "slack_webapi_http_error": {
      const status = e.statusCode ?? 0;
      return new PlatformError("slack", `Slack answered ${method} with HTTP ${status}.`, {
        retryable: status >= 500 || status === 408,
        cause: err,
      });
    }
    case "slack_webapi_request_error":
      return new PlatformError("slack", `Could not reach Slack for ${method} (network error); will retry.`, {
        retryable: true,
        cause: err,
      });
    default:
      return new PlatformError("slack", `Slack call ${method} failed: ${e?.message ?? String(err)}`, {
        retryable: false,
        cause: err,
      });
  }
}

/** Web API calls with per-method-and-channel rate-limit bookkeeping. */
export class SlackApi {
  /** `method` or `method:channel` → epoch ms until which Slack asked us to wait. */
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    readonly client: WebClient,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Calls `method`. When an earlier 429 for the same method (and channel) has not expired, rejects at
   * once with a retryable PlatformError carrying the remaining wait, without calling Slack.
   * @throws PlatformError (see `toPlatformError`).
   */
  async call<T = Record<string, unknown>>(
    method: string,
    args: Record<string, unknown>,
    channel?: string,
  ): Promise<T> {
    const key = channel ? `${method}:${channel}` : method;
    this.checkBlocked(method, key);
    try {
      return (await this.client.apiCall(method, args)) as T;
    } catch (err) {
      throw this.record(method, key, err);
    }
  }

  /** Uploads one file into a conversation (files.uploadV2: get URL, upload, complete). */
  async upload(args: {
    channel: string;
    threadTs?: string | undefined;
    path: string;
    fileName: string;
    caption?: string | undefined;
  }): Promise<string> {
    const key = `files.upload:${args.channel}`;
    this.checkBlocked("files.uploadV2", key);
    try {
      const common = {
        file: args.path,
        filename: args.fileName,
        title: args.fileName,
        ...(args.caption ? { initial_comment: args.caption } : {}),
      };
      const result = await this.client.files.uploadV2(
        args.threadTs
          ? { ...common, channel_id: args.channel, thread_ts: args.threadTs }
          : { ...common, channel_id: args.channel },
      );
      const completed = (result as { files?: { files?: { id?: string }[] }[] }).files ?? [];
      return completed[0]?.files?.[0]?.id ?? "";
    } catch (err) {
      throw this.record("files.uploadV2", key, err);
    }
  }

  /** Milliseconds until `method` may be called in `channel` again after a 429 (0: now). */
  blockedMs(method: string, channel: string): number {
    const until = this.blockedUntil.get(`${method}:${channel}`);
    return until === undefined ? 0 : Math.max(0, until - this.now());
  }

  private checkBlocked(method: string, key: string): void {
    const until = this.blockedUntil.get(key);
    if (until === undefined) return;
    const remaining = until - this.now();
    if (remaining <= 0) {
      this.blockedUntil.delete(key);
      return;
    }
    throw new PlatformError(
      "slack",
      `Slack rate-limited ${method}; retry in ${Math.ceil(remaining / 1000)} s.`,
      {
        code: "platform_rate_limited",
        retryable: true,
        retryAfterMs: remaining,
      },
    );
  }

  private record(method: string, key: string, err: unknown): PlatformError {
    const mapped = toPlatformError(method, err);
    if (mapped.code === "platform_rate_limited" && mapped.retryAfterMs) {
      this.blockedUntil.set(key, this.now() + mapped.retryAfterMs);
    }
    return mapped;
  }
}
