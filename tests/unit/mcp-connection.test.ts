/**
 * One MCP connection's lifecycle against real child processes: restarts of a server that keeps dying
 * wait exponentially longer up to the cap, stop() ends the retrying, and no log line holds the
 * environment or headers given to a server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { McpConnection, type McpServerConfig } from "../../agent/tools/mcp/index.js";
import { createLogger } from "../../core/logger.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";

let connection: McpConnection | undefined;
afterEach(async () => {
  await connection?.stop();
  connection = undefined;
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const logger = createLogger({
    level: "debug",
    destination: {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { logger, lines, raw };
}

const base = {
  enabled: true,
  timeoutMs: 10_000,
  include: [] as string[],
  exclude: [] as string[],
  platforms: undefined,
  groups: false,
  access: "owners" as const,
};

describe("McpConnection", () => {
  it("restarts a server that keeps dying with doubling delays up to the cap; stop() ends it", async () => {
    const { logger, lines } = capture();
    const config: McpServerConfig = {
      ...base,
      name: "dying",
      transport: "stdio",
      command: process.execPath,
      args: ["-e", "process.exit(1)"],
      env: { PATH: process.env["PATH"] ?? "" },
      cwd: undefined,
    };
    connection = new McpConnection(config, {
      logger,
      onToolsChanged: () => undefined,
      backoff: { baseMs: 10, maxMs: 40 },
    });
    connection.start();
    const delays = () =>
      lines.filter((l) => l["msg"] === "mcp server unavailable; retrying").map((l) => l["delayMs"] as number);
    await expect.poll(() => delays().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(5);
    expect(delays().slice(0, 5)).toEqual([10, 20, 40, 40, 40]);
    expect(connection.status()).toMatchObject({ state: "retrying", error: expect.any(String) });
    await connection.stop();
    const after = delays().length;
    await new Promise((r) => setTimeout(r, 200));
    expect(delays().length).toBe(after);
    expect(connection.status().state).toBe("stopped");
  });

  it("logs nothing of the environment it gives a server", async () => {
    const { logger, raw } = capture();
    connection = new McpConnection(
      {
        ...base,
        name: "everything",
        transport: "stdio",
        command: process.execPath,
        args: [EVERYTHING_ENTRY, "stdio"],
        env: { PATH: process.env["PATH"] ?? "", SERVER_SECRET: "s3cr3t-value" },
        cwd: undefined,
      },
      { logger, onToolsChanged: () => undefined },
    );
    connection.start();
    expect((await connection.ready()).state).toBe("connected");
    const result = await connection.callTool("get-env", {}, { signal: new AbortController().signal });
    expect(JSON.stringify(result)).toContain("s3cr3t-value");
    expect(raw.join("\n")).not.toContain("s3cr3t-value");
  });
});
