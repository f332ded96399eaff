/**
 * What every fake cloud-sandbox API shares: sandboxes whose "machine" is this host (a command runs as
 * `/bin/sh -c` here, a file path is this host's), their states (running, stopped, deleted), the
 * requests received, and the faults a test asks for: the next N calls answered 429, a sandbox lost
 * (deleted behind the client's back: every call for it then answers 404).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";

/** One fake sandbox. */
export interface FakeSandbox {
  readonly id: string;
  readonly name: string;
  state: "running" | "stopped" | "deleted";
  readonly labels: Record<string, string>;
  starts: number;
  stops: number;
}

/** A request the fake received (the body as text, for JSON; binary bodies are not kept). */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** The shared state of a fake provider. */
export class SandboxHost {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly requests: SeenRequest[] = [];
  private rateLimited = 0;
  /** Sent with each 429. */
  retryAfterS = 0;
  /** Commands run, as given. */
  readonly commands: string[] = [];

  /** The next `n` API calls answer 429. */
  rateLimitNext(n: number, retryAfterS = 0): void {
    this.rateLimited = n;
    this.retryAfterS = retryAfterS;
  }

  /** Takes one pending 429, if any. */
  takeRateLimit(): boolean {
    if (this.rateLimited <= 0) return false;
    this.rateLimited--;
    return true;
  }

  create(name: string, labels: Record<string, string> = {}): FakeSandbox {
    const sandbox: FakeSandbox = {
      id: `sb-${randomBytes(5).toString("hex")}`,
      name,
      state: "running",
      labels,
      starts: 1,
      stops: 0,
    };
    this.sandboxes.set(sandbox.id, sandbox);
    return sandbox;
  }

  /** The sandbox `idOrName` unless deleted. */
  find(idOrName: string): FakeSandbox | undefined {
    const found =
      this.sandboxes.get(idOrName) ?? [...this.sandboxes.values()].find((s) => s.name === idOrName);
    return found?.state === "deleted" ? undefined : found;
  }

  /** Deletes `id` behind the client's back. */
  lose(idOrName: string): void {
    const found = this.find(idOrName);
    if (found) found.state = "deleted";
  }

  /** The sandboxes not deleted. */
  alive(): FakeSandbox[] {
    return [...this.sandboxes.values()].filter((s) => s.state !== "deleted");
  }

  /** Runs `command` with `/bin/sh -c` on this host; output through the callbacks. */
  run(
    command: string,
    options: {
      cwd?: string;
      env?: Record<string, string>;
      onStdout?: (b: Buffer) => void;
      onStderr?: (b: Buffer) => void;
    } = {},
  ): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    this.commands.push(command);
    return new Promise((resolve) => {
      const child = spawn("/bin/sh", ["-c", command], {
        cwd: options.cwd,
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp", ...options.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (b: Buffer) => {
        stdout += b.toString();
        options.onStdout?.(b);
      });
      child.stderr.on("data", (b: Buffer) => {
        stderr += b.toString();
        options.onStderr?.(b);
      });
      child.on("close", (code, signal) =>
        resolve({ exitCode: code ?? 128 + signalNumber(signal), stdout, stderr }),
      );
      child.on("error", (err) => resolve({ exitCode: 127, stdout, stderr: err.message }));
    });
  }

  async statFile(path: string) {
    return stat(path).catch(() => undefined);
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    return readFile(path).catch(() => undefined);
  }

  async writeFile(path: string, data: Uint8Array, mode?: number): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, data, mode === undefined ? {} : { mode });
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : signal === "SIGINT" ? 2 : 1;
}

/** A started fake: its base URL and stop. */
export interface RunningFake {
  readonly url: string;
  readonly host: SandboxHost;
  stop(): Promise<void>;
}

/** Reads a request body whole. */
export async function body(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** Sends JSON. */
export function json(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
}

/**
 * Serves `handle` on 127.0.0.1; records each request with its status. A handler that throws answers 500
 * with the message (a fake's own bug shows in the test, not as a hang).
 */
export async function serve(
  host: SandboxHost,
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<unknown>,
): Promise<RunningFake> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.on("finish", () =>
      host.requests.push({ method: req.method ?? "", path: url.pathname, status: res.statusCode }),
    );
    handle(req, res, url).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { message: (err as Error).message });
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
