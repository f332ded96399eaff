/**
 * The MCP manager's reload against real server processes: reloads that overlap (two `/reload-mcp`, or
 * one and the process stopping) leave exactly the servers of the last word running, never an orphan.
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { McpManager, type McpServerConfig } from "../../agent/tools/mcp/index.js";
import { silentLogger } from "../../core/logger.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";

let manager: McpManager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

const server = (name: string): McpServerConfig => ({
  name,
  enabled: true,
  timeoutMs: 10_000,
  include: [],
  exclude: [],
  platforms: undefined,
  groups: false,
  access: "owners",
  transport: "stdio",
  command: process.execPath,
  args: [EVERYTHING_ENTRY, "stdio"],
  env: { PATH: process.env["PATH"] ?? "" },
  cwd: undefined,
});

/** Server processes this test process started and that still run. */
function runningServers(): number {
  const out = execFileSync("ps", ["--ppid", String(process.pid), "-o", "args="], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.includes(EVERYTHING_ENTRY)).length;
}

describe("McpManager", () => {
  it("runs only the later of two overlapping reloads' servers, and nothing after a stop during a reload", async () => {
    manager = new McpManager({ servers: [server("a")], logger: silentLogger() });
    manager.start();
    await manager.ready();
    expect(runningServers()).toBe(1);

    const m = manager;
    await Promise.all([m.reload([server("b")]), m.reload([server("c")])]);
    expect(m.status().map((s) => `${s.name}: ${s.state}`)).toEqual(["c: connected"]);
    await expect.poll(runningServers, { timeout: 10_000 }).toBe(1);

    // The process closes while a reload is stopping the servers: nothing starts behind its back.
    const reload = m.reload([server("d")]);
    await m.stop();
    await reload;
    await expect.poll(runningServers, { timeout: 10_000 }).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(runningServers()).toBe(0);
    expect(m.status().every((s) => s.state === "stopped")).toBe(true);
  });
});
