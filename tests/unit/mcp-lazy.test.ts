/**
 * MCP servers started on first use, against a real stdio server on the SDK (`tests/fakes/mcp/
 * marker-server.mjs`, which writes its pid to a file at every start) and the tool cache in a real
 * state.db: a warm cache starts nothing, the first calls start the server once, an idle server stops
 * and the next call starts it again, a changed definition or `idle_timeout_s: 0` starts it with the
 * manager, `tools/list_changed` refreshes the cache, and a tool the server dropped answers a clear error.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  definitionHash,
  jsonToolCache,
  McpManager,
  type McpServerConfig,
  type McpToolCacheApi,
} from "../../agent/tools/mcp/index.js";
import { silentLogger } from "../../core/logger.js";
import { SqliteMcpToolCache, SqliteState } from "../../sessions/index.js";

const SERVER = join(import.meta.dirname, "..", "fakes", "mcp", "marker-server.mjs");
const call = () => ({ signal: new AbortController().signal });

let dir: string;
let state: SqliteState;
let cache: McpToolCacheApi;
const managers: McpManager[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "herald-mcp-lazy-"));
  state = SqliteState.open(join(dir, "state.db"));
  cache = jsonToolCache(new SqliteMcpToolCache(state.database));
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

const mark = () => join(dir, "starts");
/** The pids of every start of the server so far. */
const starts = () =>
  existsSync(mark())
    ? readFileSync(mark(), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => Number(line))
    : [];
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function server(overrides: Partial<McpServerConfig> = {}, env: Record<string, string> = {}): McpServerConfig {
  return {
    name: "m",
    enabled: true,
    timeoutMs: 20_000,
    idleTimeoutMs: 300_000,
    include: [],
    exclude: [],
    platforms: undefined,
    groups: false,
    access: "owners",
    transport: "stdio",
    command: process.execPath,
    args: [SERVER],
    env: { PATH: process.env["PATH"] ?? "", MCP_MARK: mark(), ...env },
    cwd: undefined,
    ...overrides,
  } as McpServerConfig;
}

function manager(config: McpServerConfig): McpManager {
  const m = new McpManager({ servers: [config], logger: silentLogger(), cache });
  managers.push(m);
  return m;
}

/** A first manager that lists the server (caching its tools) and stops. */
async function warm(config: McpServerConfig): Promise<void> {
  const first = manager(config);
  first.start();
  expect((await first.ready())[0]).toMatchObject({ state: "connected" });
  await expect.poll(() => cache.get("m", definitionHash(config)), { timeout: 10_000 }).toBeTruthy();
  await first.stop();
}

const text = (result: { content?: unknown }) =>
  ((result.content as { type: string; text?: string }[])[0]?.text ?? "") as string;

describe("MCP servers started on first use", () => {
  it("a warm cache starts nothing; concurrent first calls start the server once and get real results", async () => {
    const config = server();
    await warm(config);
    expect(starts()).toHaveLength(1);

    const m = manager(config);
    m.start();
    const [status] = await m.ready();
    expect(status).toMatchObject({ name: "m", state: "idle" });
    expect(status?.pid).toBeUndefined();
    // The cached list is offered: the model sees the tools of a server that is not running.
    expect(m.tools().map((t) => t.name)).toEqual(expect.arrayContaining(["hello", "add_tool"]));
    await new Promise((r) => setTimeout(r, 500));
    expect(starts()).toHaveLength(1);

    const handle = m.get("m")!;
    const [a, b] = await Promise.all([
      handle.callTool("hello", {}, call()),
      handle.callTool("hello", {}, call()),
    ]);
    expect(starts()).toHaveLength(2);
    const pid = starts()[1]!;
    expect(text(a)).toBe(`hello from ${pid}`);
    expect(text(b)).toBe(`hello from ${pid}`);
    expect(m.status()[0]).toMatchObject({ state: "connected", pid });
  });

  it("stops an idle server and starts it again for the next call; its exit is no error", async () => {
    const config = server({ idleTimeoutMs: 1_000 });
    const m = manager(config);
    m.start();
    expect((await m.ready())[0]).toMatchObject({ state: "connected" });
    const first = starts()[0]!;
    // No cache entry: it started with the manager, listed, and stops once idle.
    await expect.poll(() => m.status()[0]?.state, { timeout: 20_000 }).toBe("idle");
    await expect.poll(() => alive(first), { timeout: 10_000 }).toBe(false);
    expect(m.tools().map((t) => t.name)).toContain("hello");

    const handle = m.get("m")!;
    const again = await handle.callTool("hello", {}, call());
    const second = starts()[1]!;
    expect(second).not.toBe(first);
    expect(text(again)).toBe(`hello from ${second}`);

    // Killed while it waits for calls: not an error, the next call starts it again.
    process.kill(second, "SIGKILL");
    await expect.poll(() => m.status()[0]?.state, { timeout: 10_000 }).toBe("idle");
    expect(m.status()[0]?.error).toBeUndefined();
    const third = await handle.callTool("hello", {}, call());
    expect(starts()).toHaveLength(3);
    expect(text(third)).toBe(`hello from ${starts()[2]}`);
  });

  it("a changed definition, or idle_timeout_s 0, starts the server with the manager despite a cache entry", async () => {
    await warm(server());
    expect(starts()).toHaveLength(1);

    // Another env name: another definition, whose list is not cached.
    const changed = manager(server({}, { EXTRA_NAME: "x" }));
    changed.start();
    expect((await changed.ready())[0]).toMatchObject({ state: "connected" });
    expect(starts()).toHaveLength(2);
    await changed.stop();

    // The same definition as cached, but kept running: it starts as before the cache.
    const resident = manager(server({ idleTimeoutMs: 0 }, { EXTRA_NAME: "x" }));
    resident.start();
    expect((await resident.ready())[0]).toMatchObject({ state: "connected" });
    expect(starts()).toHaveLength(3);
  });

  it("tools/list_changed refreshes the cache: the next start offers the new tool without starting", async () => {
    const config = server();
    await warm(config);
    const m = manager(config);
    m.start();
    await m.ready();
    const handle = m.get("m")!;
    expect(text(await handle.callTool("add_tool", { name: "fresh", answer: "new here" }, call()))).toBe(
      "added fresh",
    );
    await expect
      .poll(async () => (await cache.get("m", definitionHash(config)))?.tools.map((t) => t.name), {
        timeout: 10_000,
      })
      .toContain("fresh");
    expect(m.tools().map((t) => t.name)).toContain("fresh");
    await m.stop();

    const later = manager(config);
    later.start();
    await later.ready();
    expect(later.status()[0]?.state).toBe("idle");
    expect(later.tools().map((t) => t.name)).toContain("fresh");
    expect(starts()).toHaveLength(2);
  });

  it("a cached tool the server no longer has answers a clear error; the list is updated", async () => {
    // The server listed `legacy` when it was cached; it has since been updated (same definition).
    await warm(server({}, { EXTRA_TOOL: "legacy" }));
    const m = manager(server({}, { EXTRA_TOOL: "" }));
    m.start();
    await m.ready();
    expect(m.tools().map((t) => t.name)).toContain("legacy");
    const handle = m.get("m")!;
    await expect(handle.callTool("legacy", {}, call())).rejects.toThrow(
      /^MCP server 'm' no longer has the tool 'legacy' \(its tool list changed since it was listed\); its tools now: .*hello/,
    );
    expect(m.tools().map((t) => t.name)).not.toContain("legacy");
    const cached = await cache.get("m", definitionHash(m.get("m")!.config));
    expect(cached?.tools.map((t) => t.name)).not.toContain("legacy");
  });

  it("the cache key holds no secret: env values and header values never reach state.db", async () => {
    const secret = "sk-never-in-the-cache-123";
    const config = server({}, { API_TOKEN: secret });
    await warm(config);
    const rows = state.database.prepare("SELECT * FROM mcp_tool_cache").all();
    expect(JSON.stringify(rows)).not.toContain(secret);
    // A new token value is the same definition: its list stays fresh.
    expect(definitionHash(server({}, { API_TOKEN: "another" }))).toBe(definitionHash(config));
  });
});
