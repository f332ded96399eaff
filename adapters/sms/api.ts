/**
 * Twilio's Messages API through the `twilio` SDK. The SDK always builds `https://api.twilio.com/…`
 * URLs (`edge`/`region` only pick other twilio.com hosts), so the client gets an `httpClient` of its
 * own: Twilio's `RequestClient`, moving each request to `apiUrl` when one is configured (a proxy, or a
 * local fake in tests), and answering a 429 with a retryable error carrying `Retry-After`, which the
 * SDK's `RestException` would drop. Other failures become `PlatformError`s by status and Twilio code.
 */
import twilio from "twilio";
import { PlatformError } from "../../core/errors.js";

/** Twilio's default REST origin. */
export const TWILIO_API_URL = "https://api.twilio.com";

/** Twilio's error code for a recipient who replied STOP. */
export const UNSUBSCRIBED_CODE = 21610;

// The SDK's own options type is not exported by name.
type RequestOptions = Parameters<twilio.RequestClient["request"]>[0];

/** Twilio's own request client, sent to `apiUrl` and reading 429s itself. */
class HeraldRequestClient extends twilio.RequestClient {
  constructor(private readonly origin: URL | undefined) {
    super({ timeout: 30_000 });
  }

  override async request<T>(opts: RequestOptions) {
    const uri = new URL(opts.uri);
    if (this.origin) {
      uri.protocol = this.origin.protocol;
      uri.host = this.origin.host;
    }
    const res = await super.request<T>({ ...opts, uri: uri.href } as never);
    if (res.statusCode === 429) {
      const header = (res.headers as Record<string, unknown> | undefined)?.["retry-after"];
      const seconds = Number(header);
      throw new PlatformError("sms", "Twilio rate-limited the request (429 Too Many Requests).", {
        code: "platform_rate_limited",
        retryable: true,
        ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}),
      });
    }
    return res;
  }
}

/** Twilio's error code behind a PlatformError (`RestException.code`), if any. */
export function twilioCode(err: unknown): unknown {
  return (err as { cause?: { code?: unknown } }).cause?.code;
}

/** A thrown SDK or network error as a PlatformError (the SDK's error kept as its cause). */
export function twilioError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  const rest = err as { status?: unknown; code?: unknown; message?: unknown };
  if (typeof rest.status !== "number") {
    return new PlatformError("sms", `Twilio did not answer: ${String(rest.message ?? err)}`, {
      cause: err,
      retryable: true,
    });
  }
  const detail = `${String(rest.message ?? "")}${rest.code ? ` (Twilio error ${String(rest.code)})` : ""}`;
  if (rest.status === 401 || rest.status === 403) {
    return new PlatformError(
      "sms",
      `Twilio refused TWILIO_ACCOUNT_SID/TWILIO_AUTH_TOKEN (${rest.status}): ${detail}. Copy both again from the Twilio Console (Account Info).`,
      { code: "platform_auth_failed" },
    );
  }
  return new PlatformError("sms", `Twilio answered ${rest.status}: ${detail}`, {
    cause: err,
    retryable: rest.status >= 500,
  });
}

/** The SDK client behind the two calls Herald makes. */
export class SmsApi {
  private readonly client: twilio.Twilio;

  constructor(accountSid: string, authToken: string, apiUrl: string = TWILIO_API_URL) {
    const origin = apiUrl.replace(/\/+$/, "") === TWILIO_API_URL ? undefined : new URL(apiUrl);
    this.client = twilio(accountSid, authToken, { httpClient: new HeraldRequestClient(origin) });
  }

  /** The account's friendly name: a live check of the credentials. */
  async account(sid: string): Promise<{ friendlyName: string; status: string }> {
    const account = await this.client.api.v2010
      .accounts(sid)
      .fetch()
      .catch((err: unknown) => {
        throw twilioError(err);
      });
    return { friendlyName: account.friendlyName, status: account.status };
  }

  /** Sends one SMS (or MMS with `mediaUrl`); resolves to its SID. */
  async send(input: {
    to: string;
    from: string;
    body: string;
    mediaUrl?: string[] | undefined;
  }): Promise<string> {
    const message = await this.client.messages
      .create({
        to: input.to,
        from: input.from,
        ...(input.body ? { body: input.body } : {}),
        ...(input.mediaUrl?.length ? { mediaUrl: input.mediaUrl } : {}),
      })
      .catch((err: unknown) => {
        throw twilioError(err);
      });
    return message.sid;
  }
}
