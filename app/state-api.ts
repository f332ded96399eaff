/**
 * The state API remote workers reach shared state through: `POST /internal/state/<method>` with
 * `{ "args": [...] }` answers `{ "result": ... }`, served from the gateway's in-process StateClient.
 * Every request needs `Authorization: Bearer <HERALD_GATEWAY_KEY>`; without a configured key the API
 * refuses every request. Arguments are validated with the method table's zod schemas.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { STATE_API_PATH, type StateClient, splitStateMethod } from "../agent/index.js";
import { describeError, HeraldError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { SimpleResponse, SimpleRoute } from "../gateway/http/index.js";
import { isStateMethod, stateMethods } from "./state-methods.js";

/** Options of {@link createStateApiRoute}. */
export interface StateApiOptions {
  /** The gateway's in-process StateClient. */
  state: StateClient;
  /** `HERALD_GATEWAY_KEY`; undefined: every request is refused. */
  key: string | undefined;
  logger: Logger;
  /** Largest request body. @defaultValue 4 MiB */
  maxBodyBytes?: number;
  /** Resolves once the method's writes are committed; the answer waits for it. @defaultValue none */
  committed?: () => Promise<void>;
}

/**
 * The route for the gateway's HTTP server. `GET /internal/state` lists the methods this gateway
 * serves (workers probe it at start). Method failures answer 422 with the error's `code`, `message` and
 * `retryable`; the route itself never throws.
 */
export function createStateApiRoute(options: StateApiOptions): SimpleRoute {
  const log = options.logger.child({ component: "state-api" });
  const digest = (value: string) => createHash("sha256").update(value).digest();
  const expected = options.key ? digest(options.key) : undefined;
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;

  return async (req, path) => {
    if (path !== STATE_API_PATH && !path.startsWith(`${STATE_API_PATH}/`)) return undefined;
    if (!expected) {
      return error(
        503,
        "unauthorized",
        "The state API is off: HERALD_GATEWAY_KEY is not set on the gateway.",
      );
    }
    // Digests have one length, so the comparison takes the same time whatever was sent.
    const header = req.headers.authorization ?? "";
    const given = digest(header.startsWith("Bearer ") ? header.slice(7) : "");
    if (!timingSafeEqual(given, expected)) {
      log.warn({ path, remote: req.socket.remoteAddress }, "state API request with a wrong key");
      return error(401, "unauthorized", "A valid HERALD_GATEWAY_KEY is required.");
    }
    if (path === STATE_API_PATH && req.method === "GET") {
      return json(200, { methods: Object.keys(stateMethods).filter((m) => bound(options.state, m)) });
    }
    const name = path.slice(STATE_API_PATH.length + 1);
    if (req.method !== "POST") return error(405, "invalid_input", `Use POST for ${path}.`);
    if (!isStateMethod(name)) return error(404, "not_found", `There is no state method '${name}'.`);
    const fn = bound(options.state, name);
    if (!fn) return error(404, "not_found", `This gateway does not serve ${name}.`);

    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, maxBodyBytes));
    } catch (err) {
      return error(400, "invalid_input", `The body must be JSON { "args": [...] }: ${describeError(err)}`);
    }
    const raw = (body as { args?: unknown } | null)?.args ?? [];
    const args = stateMethods[name].safeParse(raw);
    if (!args.success) {
      const issue = args.error.issues[0];
      return error(
        400,
        "invalid_input",
        `Invalid arguments for ${name}: ${issue?.path.join(".")} ${issue?.message}`,
      );
    }
    try {
      const result = await fn(...(args.data as unknown[]));
      await options.committed?.();
      return json(200, { result });
    } catch (err) {
      if (err instanceof HeraldError) return error(422, err.code, err.message, err.retryable);
      log.error({ method: name, err: describeError(err) }, "state method failed");
      return error(500, "state_error", `${name} failed on the gateway: ${describeError(err)}`, true);
    }
  };
}

/** The state function at `name`, bound to its member, or undefined when the gateway lacks it. */
function bound(state: StateClient, name: string): ((...args: unknown[]) => Promise<unknown>) | undefined {
  if (!isStateMethod(name)) return undefined;
  const [member, method] = splitStateMethod(name);
  // Paths come from the table, whose members the StateClient declares.
  const members = state as unknown as Record<string, Record<string, unknown> | undefined>;
  const target = method === undefined ? members : members[member];
  const fn = target?.[method ?? member];
  return typeof fn === "function" ? (fn as (...a: unknown[]) => Promise<unknown>).bind(target) : undefined;
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Error(`body larger than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function json(status: number, body: unknown): SimpleResponse {
  return { status, body: JSON.stringify(body) };
}

function error(status: number, code: string, message: string, retryable = false): SimpleResponse {
  return json(status, { error: { code, message, retryable } });
}
