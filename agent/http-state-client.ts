/**
 * The `StateClient` of a worker on another process or machine: every method is a
 * `POST <gateway>/internal/state/<method>` with the arguments as a JSON array, authenticated with
 * `HERALD_GATEWAY_KEY`. The members come from the method table the composition root assembles (see
 * `state-methods.ts`), the same table the gateway's state API serves, so the two never drift apart.
 */
import { HeraldError, type HeraldErrorCode } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import {
  STATE_API_PATH,
  type StateApiErrorBody,
  type StateMethodName,
  splitStateMethod,
} from "./state-methods.js";
import type { StateClient } from "./types.js";

/** Options of {@link createHttpStateClient}. */
export interface HttpStateClientOptions {
  /** The gateway's base URL (`HERALD_GATEWAY_URL`), e.g. `http://gateway:8642`. */
  url: string;
  /** `HERALD_GATEWAY_KEY`. */
  key: string;
  logger: Logger;
  /** How long one call may take. @defaultValue 30000 */
  timeoutMs?: number;
  /**
   * How long a call keeps trying while the gateway refuses connections (it is restarting): the request
   * was never received, so trying again cannot do anything twice. @defaultValue 15000
   */
  connectRetryMs?: number;
}

/**
 * Builds the HTTP StateClient with a function for each of `methods` (the table's paths: every method
 * of every member). Methods reject with a `HeraldError`: the gateway's own error (same `code`,
 * `message` and `retryable`) when the method failed there, `unauthorized` for a wrong key,
 * `state_error` (retryable) when the gateway could not be reached.
 */
export function buildHttpStateClient(
  methods: Iterable<StateMethodName>,
  options: HttpStateClientOptions,
): StateClient {
  const call = caller(options);
  const client: Record<string, unknown> = {};
  for (const name of methods) {
    const [member, method] = splitStateMethod(name);
    const fn = (...args: unknown[]) => call(name, args);
    if (method === undefined) {
      client[member] = fn;
      continue;
    }
    const group = (client[member] ?? {}) as Record<string, unknown>;
    group[method] = fn;
    client[member] = group;
  }
  // Built from the table's paths, which the type checker holds against every StateClient member.
  return client as unknown as StateClient;
}

/**
 * Checks that the gateway answers and accepts the key. Rejects with `unauthorized` for a wrong key and
 * with a retryable `state_error` when the gateway cannot be reached.
 */
export async function probeGateway(options: HttpStateClientOptions): Promise<{ methods: string[] }> {
  const res = await send(options, `${base(options.url)}${STATE_API_PATH}`, { method: "GET" });
  if (!res.ok) throw await failure(options, res, "probe");
  return (await res.json()) as { methods: string[] };
}

function caller(options: HttpStateClientOptions) {
  const prefix = `${base(options.url)}${STATE_API_PATH}/`;
  return async (name: StateMethodName, args: unknown[]): Promise<unknown> => {
    // JSON has no undefined: trailing ones are left out (optional arguments), the rest become null.
    let end = args.length;
    while (end > 0 && args[end - 1] === undefined) end--;
    const res = await send(options, prefix + name, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: args.slice(0, end) }),
    });
    if (!res.ok) throw await failure(options, res, name);
    return ((await res.json()) as { result?: unknown }).result;
  };
}

async function send(options: HttpStateClientOptions, url: string, init: RequestInit): Promise<Response> {
  const deadline = Date.now() + (options.connectRetryMs ?? 15_000);
  const headers = { ...(init.headers as Record<string, string>), authorization: `Bearer ${options.key}` };
  for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2_000)) {
    try {
      return await fetch(url, {
        ...init,
        headers,
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      const refused = (err as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
      if (!refused || Date.now() + waitMs > deadline) {
        throw new HeraldError(
          `The gateway at HERALD_GATEWAY_URL (${base(options.url)}) could not be reached: ${(err as Error).message}. Fix: check that the gateway runs and that HERALD_GATEWAY_URL points at its HTTP server.`,
          { code: "state_error", retryable: true, cause: err },
        );
      }
      options.logger.debug({ url, waitMs }, "gateway refused the connection; trying again");
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

async function failure(options: HttpStateClientOptions, res: Response, name: string): Promise<HeraldError> {
  const body = (await res.json().catch(() => undefined)) as Partial<StateApiErrorBody> | undefined;
  if (res.status === 401) {
    return new HeraldError(
      "The gateway refused HERALD_GATEWAY_KEY. Fix: set HERALD_GATEWAY_KEY on this worker to the gateway's value.",
      { code: "unauthorized" },
    );
  }
  if (body?.error) {
    return new HeraldError(body.error.message, {
      code: body.error.code as HeraldErrorCode,
      retryable: body.error.retryable,
    });
  }
  options.logger.warn({ method: name, status: res.status }, "unexpected answer from the state API");
  return new HeraldError(`The gateway's state API answered HTTP ${res.status} to ${name}.`, {
    code: "state_error",
    retryable: res.status >= 500,
  });
}

function base(url: string): string {
  return url.replace(/\/+$/, "");
}
