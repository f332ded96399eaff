/**
 * The gateway's workspace store as workers reach it on Redis (agent/exec/handover/), under
 * `/internal/workspaces/`, with the state API's key (`Authorization: Bearer <HERALD_GATEWAY_KEY>`;
 * without a key every request is refused):
 * - `GET /internal/workspaces/<name>?have=<generation>`: the latest generation, with its manifest
 *   unless `have` is it;
 * - `POST /internal/workspaces/-/blobs/missing` `{ sha256: [...] }`: those not held;
 * - `PUT /internal/workspaces/-/blobs` (`application/x-tar`): blobs, each entry named by its hash;
 * - `POST /internal/workspaces/-/blobs/fetch` `{ sha256: [...] }`: a tar of those blobs;
 * - `POST /internal/workspaces/<name>/commit` `{ base, worker, set, removed }`: the next generation.
 * Errors answer `{ error: { code, message, retryable } }` like the state API.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { z } from "zod";
import {
  blobListSchema,
  commitSchema,
  HANDOVER_API_PATH,
  type Manifest,
  packBlobs,
  WorkspaceHub,
} from "../agent/exec/handover/index.js";
import { DEFAULT_LIMITS } from "../agent/exec/index.js";
import { describeError, HeraldError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { NodeRoute } from "../gateway/http/index.js";
import { type SqliteState, SqliteWorkspaceGenerations } from "../sessions/index.js";
import type { HeraldConfig } from "./config.js";

/** How often the store sweeps old generations and unreferenced blobs (on a commit, in the background). */
const SWEEP_EVERY_MS = 6 * 3_600_000;

/**
 * The gateway's workspace store and its route, on Redis with `exec.workspace_handover` on (else
 * undefined): blobs under `HERALD_HOME/workspace-store`, generations in `state.db`. Generations nobody
 * pushed for `exec.workspace_retention_days` are forgotten, as workers delete such workspaces.
 */
export function workspaceStoreRoute(
  config: HeraldConfig,
  state: SqliteState,
  logger: Logger,
): NodeRoute | undefined {
  if (!config.queue.redisUrl || !config.exec.workspaceHandover) return undefined;
  const hub = new WorkspaceHub({
    dir: join(config.homeDir, "workspace-store"),
    generations: new SqliteWorkspaceGenerations<Manifest>(state.database),
    quotaBytes: config.exec.limits.workspaceQuotaBytes ?? DEFAULT_LIMITS.workspaceQuotaBytes,
    logger: logger.child({ component: "workspace-store" }),
  });
  let sweptAt = 0;
  const retentionMs = config.exec.workspaceRetentionDays * 86_400_000;
  return createWorkspaceApiRoute({
    hub,
    key: config.gatewayClient.key,
    logger,
    committed: async () => {
      await state.committed();
      if (Date.now() - sweptAt < SWEEP_EVERY_MS) return;
      sweptAt = Date.now();
      void hub.sweep(retentionMs).catch(() => undefined);
    },
  });
}

/** Options of {@link createWorkspaceApiRoute}. */
export interface WorkspaceApiOptions {
  hub: WorkspaceHub;
  /** `HERALD_GATEWAY_KEY`; undefined: every request is refused. */
  key: string | undefined;
  logger: Logger;
  /** Resolves once a commit is durable; the answer waits for it. */
  committed?: () => Promise<void>;
  /** Largest JSON body. @defaultValue 64 MiB */
  maxJsonBytes?: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, name: string, action: string) => Promise<void>;

/** The route; see the module comment. It answers every path under its prefix and never throws. */
export function createWorkspaceApiRoute(options: WorkspaceApiOptions): NodeRoute {
  const log = options.logger.child({ component: "workspace-api" });
  const digest = (value: string) => createHash("sha256").update(value).digest();
  const expected = options.key ? digest(options.key) : undefined;
  const handle = handlers(options);
  return {
    async handleHttp(req, res, path) {
      if (!path.startsWith(`${HANDOVER_API_PATH}/`)) return false;
      if (!expected) {
        send(
          res,
          503,
          errorBody("unauthorized", "The workspace store is off: HERALD_GATEWAY_KEY is not set."),
        );
        return true;
      }
      const header = req.headers.authorization ?? "";
      if (!timingSafeEqual(digest(header.startsWith("Bearer ") ? header.slice(7) : ""), expected)) {
        log.warn({ path, remote: req.socket.remoteAddress }, "workspace store request with a wrong key");
        send(res, 401, errorBody("unauthorized", "A valid HERALD_GATEWAY_KEY is required."));
        return true;
      }
      const rest = path.slice(HANDOVER_API_PATH.length + 1);
      const slash = rest.indexOf("/");
      const name = slash < 0 ? rest : rest.slice(0, slash);
      const action = slash < 0 ? "" : rest.slice(slash + 1);
      try {
        await handle(req, res, name, action);
      } catch (err) {
        answerError(res, err, log, path);
      }
      return true;
    },
  };
}

function handlers(options: WorkspaceApiOptions): Handler {
  const { hub } = options;
  const maxJson = options.maxJsonBytes ?? 64 * 1024 * 1024;
  return async (req, res, name, action) => {
    const route = `${req.method} ${name === "-" ? `-/${action}` : action || "head"}`;
    switch (route) {
      case "GET head": {
        const have = new URL(req.url ?? "/", "http://x").searchParams.get("have");
        send(res, 200, hub.head(name, have === null ? undefined : Number(have)));
        return;
      }
      case "POST -/blobs/missing": {
        const { sha256 } = parse(blobListSchema, await readJson(req, maxJson));
        send(res, 200, { missing: await hub.missing(sha256) });
        return;
      }
      case "PUT -/blobs":
        send(res, 200, { stored: await hub.receive(req as never, hub.maxBlobBytes) });
        return;
      case "POST -/blobs/fetch": {
        const { sha256 } = parse(blobListSchema, await readJson(req, maxJson));
        const sources = await hub.sources(sha256);
        res.writeHead(200, { "content-type": "application/x-tar" });
        await pipeline(packBlobs(sources), res);
        return;
      }
      case "POST commit": {
        const body = parse(commitSchema, await readJson(req, maxJson));
        const outcome = await hub.commit(
          name,
          body.base,
          { set: body.set, removed: body.removed },
          body.worker,
        );
        await options.committed?.();
        send(res, 200, outcome);
        return;
      }
    }
    throw new HeraldError(`There is no workspace store route ${req.method} ${req.url}.`, {
      code: "not_found",
    });
  };
}

/** `raw` checked against `schema`; throws `invalid_input` naming the first issue. */
function parse<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HeraldError(`Invalid body: ${issue?.path.join(".")} ${issue?.message}`, {
      code: "invalid_input",
    });
  }
  return parsed.data;
}

async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes)
      throw new HeraldError(`The body is larger than ${maxBytes} bytes.`, { code: "invalid_input" });
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (err) {
    throw new HeraldError(`The body must be JSON: ${describeError(err)}`, { code: "invalid_input" });
  }
}

function answerError(res: ServerResponse, err: unknown, log: Logger, path: string): void {
  if (res.headersSent) {
    log.warn({ path, err: describeError(err) }, "workspace store answer cut short");
    res.destroy();
    return;
  }
  if (err instanceof HeraldError) {
    const status = err.code === "not_found" ? 404 : err.code === "invalid_input" ? 400 : 422;
    if (status === 400) log.warn({ path, err: err.message }, "workspace store request refused");
    send(res, status, errorBody(err.code, err.message, err.retryable));
    return;
  }
  log.error({ path, err: describeError(err) }, "workspace store request failed");
  send(res, 500, errorBody("state_error", `The workspace store failed: ${describeError(err)}`, true));
}

function errorBody(code: string, message: string, retryable = false) {
  return { error: { code, message, retryable } };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
