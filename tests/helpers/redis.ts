/**
 * A private redis-server per test file, on a free port of 127.0.0.1: tests never touch a Redis that
 * runs on the machine (6379) and leave nothing running behind them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { freePort } from "./net.js";

export interface PrivateRedis {
  url: string;
  port: number;
  /** Stops the server and removes its folder. Idempotent. */
  stop(): Promise<void>;
  /**
   * Stops the server and starts it again on the same port with the same data, as a Redis with
   * persistence would come back (the data is saved at shutdown with `SHUTDOWN SAVE`).
   */
  restart(): Promise<void>;
}

const NOT_INSTALLED =
  "redis-server is not installed. Run the test command from the README, which installs it " +
  "(on Debian: apt-get install -y redis-server), then run the tests again.";

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Starts a private redis-server and waits until it answers PING. */
export async function startRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), "herald-redis-"));
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 1; !child; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir);
    } catch (err) {
      // Another process may have taken the port between the probe and the launch.
      if ((err as Error).message === NOT_INSTALLED || attempt >= 3) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child) await kill(child);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      if (stopped) throw new Error("this Redis was stopped; start a new one");
      if (child) {
        await send(port, "SHUTDOWN SAVE\r\n").catch(() => undefined);
        await kill(child);
      }
      child = await launch(port, dir);
    },
  };
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      "--dir",
      dir,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const c of running) c.kill("SIGKILL");
    });
  }
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  });
  const exited = new Promise<Error>((resolve) => {
    child.once("error", (err: NodeJS.ErrnoException) =>
      resolve(err.code === "ENOENT" ? new Error(NOT_INSTALLED) : err),
    );
    child.once("exit", (code) => resolve(new Error(`redis-server exited with code ${code}: ${output}`)));
  });
  child.once("exit", () => running.delete(child));
  for (let i = 0; i < 200; i++) {
    const failure = await Promise.race([exited, delay(25).then(() => undefined)]);
    if (failure) {
      running.delete(child);
      throw failure;
    }
    if (
      await send(port, "PING\r\n").then(
        (r) => r.startsWith("+PONG"),
        () => false,
      )
    )
      return child;
  }
  await kill(child);
  throw new Error(`redis-server on port ${port} did not answer PING within 5 s: ${output}`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(timer);
}

/** Sends one inline command and resolves with the first reply chunk. */
function send(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.setTimeout(1_000, () => socket.destroy(new Error("timeout")));
    socket.once("connect", () => socket.write(command));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString());
    });
    // SHUTDOWN answers nothing: the server closes the connection.
    socket.once("close", () => resolve(""));
    socket.once("error", reject);
  });
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The test file's private Redis: started before its first test, stopped after its last (registers the
 * `beforeAll`/`afterAll` in the calling file). Use it inside tests; before the start it throws.
 */
export function redisPerFile(): PrivateRedis {
  let started: PrivateRedis | undefined;
  beforeAll(async () => {
    started = await startRedis();
  });
  afterAll(async () => {
    await started?.stop();
  });
  const get = (): PrivateRedis => {
    if (!started) throw new Error("the test file's Redis is not started yet: use it inside a test");
    return started;
  };
  return {
    get url() {
      return get().url;
    },
    get port() {
      return get().port;
    },
    stop: () => get().stop(),
    restart: () => get().restart(),
  };
}
