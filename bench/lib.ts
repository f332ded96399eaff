/**
 * Benchmark helpers: percentiles, a gateway child process with its peak RSS, and writing a section of
 * BENCHMARKS.md between markers so each scenario updates only its own figures.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: number[]) => percentile(values, 50);

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  homeDir: string;
  /** Milliseconds from spawn to /health answering. */
  coldStartMs: number;
  /** Peak resident set size so far (VmHWM), MiB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/** The Node flags `npm start` runs the gateway with (package.json's start script). */
export function startFlags(root: string): string[] {
  return startWords(root).filter((arg) => arg.startsWith("--"));
}

/** The script `npm start` runs in the checkout at `root` (`dist/app/cli.js` for a build before the bundle). */
export function startEntry(root: string): string {
  return join(root, startWords(root).find((arg) => arg.endsWith(".js")) ?? "dist/app/cli.js");
}

function startWords(root: string): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  return (scripts["start"] ?? "").split(/\s+/);
}

/**
 * Spawns `herald gateway` from dist/ with `nodeFlags` (none: V8's defaults) and `env`, and waits
 * until /health answers.
 */
export async function spawnGateway(
  env: Record<string, string>,
  root: string,
  nodeFlags: string[] = [],
  entry: string = join(root, "dist/app/cli.js"),
): Promise<GatewayProcess> {
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-"));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, entry, "gateway"], {
    env: {
      ...process.env,
      HERALD_HOME: homeDir,
      API_SERVER_PORT: String(port),
      HERALD_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const coldStartMs = performance.now() - started;
  return {
    child,
    url,
    homeDir,
    coldStartMs,
    peakRssMb() {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return kb / 1024;
    },
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(homeDir, { recursive: true, force: true });
    },
  };
}

/** Replaces (or appends) the section `name` of BENCHMARKS.md. */
export function writeSection(file: string, name: string, body: string): void {
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const current = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  const block = `${begin}\n${body.trim()}\n${end}`;
  const re = new RegExp(`${begin}[\\s\\S]*?${end}`);
  const next = re.test(current) ? current.replace(re, block) : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}

export function machineLine(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  return `${cpus().length} cores (${cpu}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

// The load generator shares the machine with the gateway: node:http with a keep-alive pool costs it
// about half the CPU of fetch per request, leaving more of the 2 cores to what is measured.
const clientAgent = new HttpAgent({ keepAlive: true, maxSockets: 1024 });

/** Sends one non-streaming turn to the API server of `url` in session `sessionId`; throws unless 200. */
export function postTurn(url: string, text: string, sessionId: string): Promise<void> {
  const body = JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent: clientAgent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-herald-session-id": sessionId,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          res.statusCode === 200
            ? resolve()
            : reject(new Error(`turn failed: ${res.statusCode} ${Buffer.concat(chunks).toString()}`)),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number, thread?: number): number {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The floor: `count` sequential streaming calls straight to the fake model (after 50 warm-up calls), the
 * same call the agent makes; returns each call's milliseconds.
 */
export async function measureFloor(baseURL: string, count: number): Promise<number[]> {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL, apiKey: "bench", maxRetries: 0 });
  const floor: number[] = [];
  for (let i = 0; i < count + 50; i++) {
    const t0 = performance.now();
    const stream = await client.chat.completions.create({
      model: "fake-model",
      stream: true,
      messages: [{ role: "user", content: `hello ${i}` }],
    });
    for await (const _ of stream) {
      // drain
    }
    if (i >= 50) floor.push(performance.now() - t0);
  }
  return floor;
}
