/**
 * Real `herald gateway` and `herald worker` processes on a private Redis, as an operator runs them when
 * scaling out: each is `node --import tsx app/cli.ts <command>` (one process, so SIGKILL reaches
 * it), configured by env only. Each cluster has its own queue prefix, gateway key and HERALD_HOME, and
 * `stop()` kills every process it started and removes its folders.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteState } from "../../sessions/sqlite-state.js";
import { freePort } from "./net.js";

const cli = join(import.meta.dirname, "..", "..", "app", "cli.ts");

/** One spawned process. */
export interface HeraldProcess {
  name: string;
  child: ChildProcess;
  /** The last 20 kB of its stdout and stderr (pino logs, errors). */
  output(): string;
  /** Sends `signal` (SIGKILL by default) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns `herald <command> ...args` with `env` over this process's environment. */
export function spawnHerald(
  name: string,
  command: string,
  env: Record<string, string>,
  args: string[] = [],
): HeraldProcess {
  const child = spawn(process.execPath, ["--import", "tsx", cli, command, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    name,
    child,
    output: () => tail,
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export interface ClusterOptions {
  redisUrl: string;
  /** The fake model's base URL. */
  llmUrl: string;
  /** Env of the gateway only (platform adapters). */
  gatewayEnv?: Record<string, string>;
  /** `HERALD_QUEUE_LOCK_DURATION_MS` of every process. @defaultValue the configured default */
  lockDurationMs?: number;
}

/** Health as `GET /health` reports it. */
export interface Health {
  status: string;
  queue: { backend: string; waiting: number; active: number; workers: number; error?: string };
  adapters: Record<string, { state: string }>;
  warnings?: string[];
}

/** A gateway and its workers on one queue prefix. */
export class HeraldCluster {
  readonly prefix = `t${randomBytes(5).toString("hex")}`;
  readonly key = randomBytes(16).toString("hex");
  readonly home = mkdtempSync(join(tmpdir(), "herald-cluster-"));
  readonly processes: HeraldProcess[] = [];
  gateway: HeraldProcess | undefined;
  #port = 0;
  #workers = 0;
  #state: SqliteState | undefined;

  constructor(readonly options: ClusterOptions) {}

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Env every process shares. */
  #env(): Record<string, string> {
    return {
      OPENAI_BASE_URL: this.options.llmUrl,
      OPENAI_API_KEY: "test",
      HERALD_MODEL: "fake-model",
      REDIS_URL: this.options.redisUrl,
      HERALD_QUEUE_PREFIX: this.prefix,
      HERALD_GATEWAY_KEY: this.key,
      HERALD_LOG_LEVEL: "warn",
      HERALD_LEARNING_ENABLED: "false",
      ...(this.options.lockDurationMs
        ? { HERALD_QUEUE_LOCK_DURATION_MS: String(this.options.lockDurationMs) }
        : {}),
    };
  }

  /** Starts (or restarts, on the same HERALD_HOME and port) the gateway; resolves when /health answers. */
  async startGateway(): Promise<HeraldProcess> {
    this.#port ||= await freePort();
    const proc = spawnHerald("gateway", "gateway", {
      ...this.#env(),
      HERALD_HOME: this.home,
      API_SERVER_PORT: String(this.#port),
      ...this.options.gatewayEnv,
    });
    this.processes.push(proc);
    this.gateway = proc;
    await until(`gateway /health`, proc, async () => (await fetch(`${this.url}/health`)).ok);
    return proc;
  }

  /**
   * Starts a worker with its own HERALD_HOME, or `home` (workers sharing one); `model` is the model name
   * it asks for, so the fake model can tell which worker sent a request; `env` is added last (e.g.
   * `HERALD_LOG_LEVEL: "info"` to read what it logs). Resolves once the gateway counts it.
   */
  async startWorker(
    model = "fake-model",
    concurrency = 1,
    options: { home?: string; env?: Record<string, string> } = {},
  ): Promise<HeraldProcess> {
    const home = options.home ?? join(this.home, `worker-${this.processes.length}`);
    const proc = spawnHerald(
      `worker ${model}`,
      "worker",
      {
        ...this.#env(),
        HERALD_MODEL: model,
        HERALD_HOME: home,
        HERALD_GATEWAY_URL: this.url,
        ...options.env,
      },
      ["--concurrency", String(concurrency)],
    );
    this.processes.push(proc);
    const expected = ++this.#workers;
    await until(
      `${proc.name} counted in /health`,
      proc,
      async () => (await this.health()).queue.workers >= expected,
    );
    return proc;
  }

  /** Kills one process with SIGKILL. */
  async kill(proc: HeraldProcess): Promise<void> {
    if (proc.name.startsWith("worker")) this.#workers--;
    await proc.kill("SIGKILL");
  }

  async health(): Promise<Health> {
    return (await (await fetch(`${this.url}/health`)).json()) as Health;
  }

  async metrics(): Promise<string> {
    return (await fetch(`${this.url}/metrics`)).text();
  }

  /** One user message through the gateway's API in session `sessionId`; the reply's text ("" if none). */
  async chat(text: string, sessionId: string): Promise<string> {
    const res = await fetch(`${this.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-herald-session-id": sessionId },
      body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] }),
    });
    const body = (await res.json()) as { choices?: { message: { content: string } }[] };
    return body.choices?.[0]?.message.content ?? "";
  }

  /** The gateway's state file (read beside the running gateway; WAL allows it). */
  state(): SqliteState {
    this.#state ??= SqliteState.open(join(this.home, "state.db"));
    return this.#state;
  }

  /** Assistant answers stored in the session(s) whose key starts with `keyPrefix`, in order. */
  answers(keyPrefix: string): string[] {
    const state = this.state();
    return state.sessions
      .list({ keyPrefix })
      .flatMap((s) => state.sessions.load(s.id))
      .filter((m) => m.message.role === "assistant")
      .map((m) => String(m.message.content));
  }

  /** Output of every process, for a failing test's message. */
  output(): string {
    return this.processes.map((p) => `--- ${p.name}\n${p.output()}`).join("\n");
  }

  /** Kills everything this cluster started and removes its folders. Idempotent. */
  async stop(): Promise<void> {
    this.#state?.close();
    this.#state = undefined;
    await Promise.all(this.processes.map((p) => p.kill("SIGKILL")));
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** Polls `check` every 50 ms until it holds; fails with the process's output when it exits or 30 s pass. */
export async function until(what: string, proc: HeraldProcess, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.child.exitCode !== null)
      throw new Error(`${proc.name} exited before ${what}:\n${proc.output()}`);
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls a synchronous condition every 25 ms; throws `describe()` after `timeoutMs`. */
export async function eventually(
  check: () => boolean,
  describe: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(describe());
    await new Promise((r) => setTimeout(r, 25));
  }
}
