/**
 * DingTalk's Stream mode through `dingtalk-stream`'s `DWClient`: the client opens a connection with
 * `POST /v1.0/gateway/connections/open` (Client ID + Secret → a WebSocket endpoint and a ticket), then
 * the WebSocket, answers pings, and reconnects by itself when it drops. The SDK posts that request to a
 * fixed address, so `getEndpoint` is overridden to post the same request to `<apiUrl>/v1.0/gateway/…`
 * (a proxy, a test server); everything after it is the SDK's own. The first connection is opened here, so
 * refused credentials fail `start` with the fix instead of retrying forever.
 */
import { DWClient, type DWClientDownStream } from "dingtalk-stream";
import { PlatformError } from "../../core/errors.js";

/** A `DWClient` whose gateway address is configurable. */
export class GatewayClient extends DWClient {
  constructor(
    opts: { clientId: string; clientSecret: string },
    private readonly gatewayUrl: string,
  ) {
    super({ ...opts, keepAlive: true, ua: "herald" });
  }

  /** As the SDK's, against `gatewayUrl`. @throws PlatformError naming the fix when refused */
  override async getEndpoint(): Promise<this> {
    const config = this.getConfig();
    let res: Response;
    try {
      res = await fetch(this.gatewayUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({
          clientId: config.clientId,
          clientSecret: config.clientSecret,
          ua: config.ua,
          subscriptions: config.subscriptions,
        }),
      });
    } catch (err) {
      throw new PlatformError(
        "dingtalk",
        `DingTalk's stream gateway did not answer (${(err as Error).message})`,
        { cause: err, retryable: true },
      );
    }
    const body = (await res.json().catch(() => ({}))) as {
      endpoint?: string;
      ticket?: string;
      code?: string;
    };
    if (
      res.status === 401 ||
      res.status === 403 ||
      (res.status === 400 && /auth|secret|client/i.test(body.code ?? ""))
    ) {
      throw new PlatformError(
        "dingtalk",
        `DingTalk refused DINGTALK_CLIENT_ID / DINGTALK_CLIENT_SECRET when opening the stream (HTTP ${res.status}). Fix: copy both from the app's Credentials & Basic Info page, and choose Stream mode for the robot's messages.`,
        { code: "platform_auth_failed" },
      );
    }
    if (!res.ok || !body.endpoint || !body.ticket) {
      throw new PlatformError(
        "dingtalk",
        `DingTalk's stream gateway answered HTTP ${res.status} without an endpoint`,
        { retryable: true },
      );
    }
    // The SDK reads the WebSocket address from this private field.
    (this as unknown as { dw_url: string }).dw_url =
      `${body.endpoint}?ticket=${encodeURIComponent(body.ticket)}`;
    return this;
  }
}

/** One callback from the stream: its SDK message id (to acknowledge) and its parsed `data`. */
export interface StreamCallback {
  messageId: string;
  topic: string;
  data: unknown;
}

/** The callback's `data` parsed; undefined when it is not JSON. */
export function readCallback(message: DWClientDownStream): StreamCallback {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    data = undefined;
  }
  return { messageId: message.headers.messageId, topic: message.headers.topic, data };
}
