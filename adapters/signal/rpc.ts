/**
 * signal-cli's JSON-RPC over HTTP (`POST /api/v1/rpc`), with its failures turned into PlatformErrors:
 * a rate limit is retryable, an unregistered recipient or unknown group is final, and a daemon that
 * does not answer names `SIGNAL_HTTP_URL` and the command that starts it.
 */
import { randomUUID } from "node:crypto";
import { PlatformError } from "../../core/errors.js";

interface RpcResponse {
  result?: unknown;
  error?: { code: number; message: string } | undefined;
}

/** Per-recipient results of `send` (signal-cli reports failures there, not as an error). */
interface SendResults {
  timestamp?: number;
  results?: { type?: string; recipientAddress?: { number?: string | null } }[];
}

const START_HINT = (url: string, account: string) =>
  `Fix: start signal-cli's daemon with \`signal-cli -a ${account} daemon --http ${new URL(url).host}\`, or set SIGNAL_HTTP_URL to where it listens.`;

/** The JSON-RPC client of one account. */
export class SignalRpc {
  constructor(
    private readonly httpUrl: string,
    private readonly account: string,
  ) {}

  /** Calls `method`; resolves to its `result`. @throws PlatformError */
  async call(method: string, params: Record<string, unknown> = {}, signal?: AbortSignal): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(new URL("/api/v1/rpc", this.httpUrl), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: randomUUID(),
          method,
          params: { account: this.account, ...params },
        }),
        signal: signal ?? AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new PlatformError(
        "signal",
        `signal-cli at ${this.httpUrl} did not answer ${method}. ${START_HINT(this.httpUrl, this.account)}`,
        { cause: err, retryable: true },
      );
    }
    if (res.status === 401 || res.status === 403) {
      throw new PlatformError(
        "signal",
        `signal-cli at ${this.httpUrl} refused the request (HTTP ${res.status}). Fix: check the proxy in front of it.`,
        { code: "platform_auth_failed" },
      );
    }
    if (!res.ok) {
      throw new PlatformError("signal", `signal-cli answered ${method} with HTTP ${res.status}.`, {
        retryable: res.status >= 500,
      });
    }
    const body = (await res.json()) as RpcResponse;
    if (body.error) throw rpcError(method, body.error, this.account);
    if (method === "send") checkSendResults(body.result as SendResults);
    return body.result;
  }
}

function rpcError(method: string, error: { code: number; message: string }, account: string): PlatformError {
  const message = error.message ?? "";
  if (error.code === -5 || /rate ?limit/i.test(message)) {
    return new PlatformError("signal", `Signal rate-limited ${method}: ${message}`, {
      code: "platform_rate_limited",
      retryable: true,
    });
  }
  if (
    /not registered|unregistered account|authorization failed|specified account does not exist/i.test(message)
  ) {
    return new PlatformError(
      "signal",
      `signal-cli cannot use ${account} (${message}). Fix: register or link it (\`signal-cli -a ${account} register\` or \`signal-cli link\`), then restart the daemon.`,
      { code: "platform_auth_failed" },
    );
  }
  const unknownTarget = /invalid group id|group not found|unregistered user|unknown (group|recipient)/i.test(
    message,
  );
  return new PlatformError("signal", `signal-cli refused ${method}: ${message} (code ${error.code}).`, {
    retryable: !unknownTarget && error.code === -3,
  });
}

function checkSendResults(result: SendResults | undefined): void {
  const failed = result?.results?.filter((r) => r.type && r.type !== "SUCCESS") ?? [];
  // A group send that reached some members is delivered; only all-failed is an error.
  if (failed.length === 0 || failed.length < (result?.results?.length ?? 0)) return;
  const type = failed[0]!.type!;
  if (type === "RATE_LIMIT_FAILURE") {
    throw new PlatformError("signal", "Signal rate-limited the send.", {
      code: "platform_rate_limited",
      retryable: true,
    });
  }
  throw new PlatformError("signal", `Signal could not deliver the message (${type}).`, {
    retryable: type === "NETWORK_FAILURE",
  });
}
