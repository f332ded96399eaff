/**
 * Starts a whole gateway in-process for end-to-end tests: a temp HERALD_HOME, the scripted fake model,
 * the real runner, queue, state, API server and whatever adapters the env configures. `restart()` stops
 * and starts again on the same HERALD_HOME; `crash()` drops everything without draining (a kill).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../app/config.js";
import { type Gateway, startGateway } from "../../app/gateway-main.js";
import { type Logger, silentLogger } from "../../core/logger.js";
import type { PlatformAdapter } from "../../core/types.js";
import type { SqliteState } from "../../sessions/sqlite-state.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";

export interface HarnessOptions {
  /** Config env (platform tokens, API roots, allowlists…); merged over the harness's defaults. */
  env?: Record<string, string>;
  /** Written to HERALD_HOME/config.yaml before start. */
  configYaml?: string;
  llm?: FakeLlm;
  /** Adapters the test built itself, run besides the configured ones. */
  adapters?: () => PlatformAdapter[];
  /** The gateway's logger (tests that read log lines). @defaultValue a silent logger */
  logger?: Logger;
}

export interface Harness {
  llm: FakeLlm;
  homeDir: string;
  /** `http://127.0.0.1:<port>` of the API server (empty when it is disabled). */
  apiUrl: string;
  gateway: Gateway;
  state: SqliteState;
  /** Stops gracefully and starts again on the same HERALD_HOME. */
  /** Stops and starts the gateway; `rereadConfig`: with config.yaml read again (the port kept). */
  restart(options?: { rereadConfig?: boolean }): Promise<void>;
  /** Drops the gateway without draining anything (like kill -9), then nothing runs until `start()`. */
  crash(): Promise<void>;
  /** Starts again after `crash()`. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a gateway on a fresh HERALD_HOME with the API server on a free loopback port. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const homeDir = mkdtempSync(join(tmpdir(), "herald-test-"));
  if (options.configYaml) writeFileSync(join(homeDir, "config.yaml"), options.configYaml);
  const ownLlm = !options.llm;
  const llm = options.llm ?? (await startFakeLlm());
  const env: Record<string, string> = {
    HERALD_HOME: homeDir,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "test-key",
    HERALD_MODEL: "fake-model",
    API_SERVER_PORT: "0",
    HERALD_LOG_LEVEL: "silent",
    ...options.env,
  };
  let config = loadConfig({ env });
  let gateway: Gateway | undefined;
  const boot = async () => {
    gateway = await startGateway(config, {
      logger: options.logger ?? silentLogger(),
      extraAdapters: options.adapters?.(),
      retryBaseDelayMs: 5,
    });
    // A fixed port after the first start, so clients keep their URL across restarts.
    if (gateway.http && config.apiServer.port === 0) {
      config.apiServer.port = Number(new URL(gateway.http.url).port);
    }
  };
  await boot();

  const harness: Harness = {
    llm,
    homeDir,
    get apiUrl() {
      return gateway?.http?.url ?? "";
    },
    get gateway() {
      if (!gateway) throw new Error("the gateway is not running");
      return gateway;
    },
    get state() {
      return harness.gateway.state;
    },
    async restart(restartOptions = {}) {
      await gateway?.stop();
      if (restartOptions.rereadConfig) {
        const port = config.apiServer.port;
        config = loadConfig({ env });
        config.apiServer.port = port;
      }
      await boot();
    },
    async crash() {
      const g = gateway;
      gateway = undefined;
      if (!g) return;
      // No graceful drain: stop receiving, drop the queue's work, close the file.
      await g.http?.close();
      await Promise.all([...g.adapters.values()].map((a) => a.stop().catch(() => undefined)));
      await g.runner.stop();
      await g.queue.close();
      g.state.close();
    },
    async start() {
      await boot();
    },
    async stop() {
      await gateway?.stop();
      gateway = undefined;
      if (ownLlm) await llm.close();
      rmSync(homeDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** Posts a chat completion to the harness's API server and returns status, session id and reply text. */
export async function chat(
  harness: Harness,
  text: string,
  options: { sessionId?: string; history?: { role: string; content: string }[]; key?: string } = {},
): Promise<{ status: number; sessionId: string | null; text: string; body: unknown }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.sessionId) headers["x-herald-session-id"] = options.sessionId;
  if (options.key) headers["authorization"] = `Bearer ${options.key}`;
  const res = await fetch(`${harness.apiUrl}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: "herald",
      messages: [...(options.history ?? []), { role: "user", content: text }],
    }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  return {
    status: res.status,
    sessionId: res.headers.get("x-herald-session-id"),
    text: body.choices?.[0]?.message.content ?? "",
    body,
  };
}
