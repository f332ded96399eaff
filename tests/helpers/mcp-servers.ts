/**
 * The reference MCP servers from npm, as tests and benchmarks start them: by Node's own path and the
 * package's resolved entry (never npx), over stdio or streamable HTTP on a free loopback port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

// Resolved like any dependency (also from the build in dist/): the packages have no `exports` map.
const resolveEntry = (pkg: string) =>
  join(
    dirname(createRequire(import.meta.url).resolve(`@modelcontextprotocol/${pkg}/package.json`)),
    "dist/index.js",
  );

/** `node …/server-everything/dist/index.js`. */
export const EVERYTHING_ENTRY = resolveEntry("server-everything");
/** `node …/server-filesystem/dist/index.js <allowed dir>`. */
export const FILESYSTEM_ENTRY = resolveEntry("server-filesystem");

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A server-everything child serving `mode` over HTTP; `url` is its endpoint. */
export interface HttpEverything {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

/** Starts server-everything in `streamableHttp` (endpoint `/mcp`) or `sse` (endpoint `/sse`) mode. */
export async function startHttpEverything(
  mode: "streamableHttp" | "sse" = "streamableHttp",
): Promise<HttpEverything> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, mode], {
    env: { PATH: process.env["PATH"] ?? "", PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (/listening|running/i.test(seen)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything ${mode} exited (${code}): ${seen}`)));
  });
  return {
    url: `http://127.0.0.1:${port}${mode === "sse" ? "/sse" : "/mcp"}`,
    child,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
