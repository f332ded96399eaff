/**
 * MCP servers started on first use, through the whole gateway: a restarted gateway whose server's tool
 * list is cached in state.db starts no server process (the test server writes its pid at every start),
 * offers the cached tools to the model, starts the server on the model's call and returns its real
 * answer; the server stops once idle and the next call starts it again. The cached list of a server
 * removed from config.yaml is deleted at the next start (and on `/reload-mcp`), and `mcp_list_resources`
 * without a server name lists the running servers and starts no idle one.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import { EVERYTHING_ENTRY, type HttpEverything, startHttpEverything } from "../helpers/mcp-servers.js";

const SERVER = join(import.meta.dirname, "..", "fakes", "mcp", "marker-server.mjs");
const node = JSON.stringify(process.execPath);

let harness: Harness | undefined;
let remote: HttpEverything | undefined;
afterEach(async () => {
  await harness?.stop();
  await remote?.close();
  harness = remote = undefined;
});

const toolNames = (request: FakeLlmRequest | undefined) => (request?.tools ?? []).map((t) => t.function.name);
const toolResults = (request: FakeLlmRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => messageText(m));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("MCP servers started on first use", () => {
  it("a restart with a cached list spawns nothing; the call starts the server, idle stops it, the next call restarts it", async () => {
    // The mark file lives in HERALD_HOME, known only once the harness made it: a relative path there.
    harness = await startHarness({
      configYaml: `mcp_servers:\n  m:\n    command: ${node}\n    args: [${JSON.stringify(SERVER)}]\n    cwd: .\n    env: { MCP_MARK: starts }\n    idle_timeout_s: 2\n`,
      env: { HERALD_TOOLS_LAZY: "false" },
    });
    const h = harness;
    const mark = join(h.homeDir, "starts");
    const starts = () =>
      existsSync(mark) ? readFileSync(mark, "utf8").split("\n").filter(Boolean).map(Number) : [];
    const status = () => h.gateway.mcp!.status()[0];

    // First start: no cached list, so the server starts with the gateway, is listed, cached, and stops.
    await expect.poll(() => status()?.state, { timeout: 30_000 }).toBe("connected");
    await expect.poll(() => status()?.state, { timeout: 30_000 }).toBe("idle");
    expect(starts()).toHaveLength(1);
    const cached = h.state.database.prepare("SELECT server, tools FROM mcp_tool_cache").all() as {
      server: string;
      tools: string;
    }[];
    expect(cached.map((r) => r.server)).toEqual(["m"]);
    expect(cached[0]?.tools).toContain('"hello"');

    await h.restart();
    // The restarted gateway offers the cached tools and has started nothing.
    await expect.poll(() => status()?.state, { timeout: 30_000 }).toBe("idle");
    await new Promise((r) => setTimeout(r, 1_000));
    expect(starts()).toHaveLength(1);
    expect(status()?.pid).toBeUndefined();

    h.llm.script({ toolCalls: [{ name: "mcp_m_hello", arguments: {} }] }, (request) => ({
      text: `tool said: ${toolResults(request).at(-1)}`,
    }));
    const reply = await chat(h, "say hello", { sessionId: "lazy-1" });
    expect(toolNames(h.llm.requests.at(-2))).toContain("mcp_m_hello");
    expect(starts()).toHaveLength(2);
    const second = starts()[1]!;
    expect(reply.text).toBe(`tool said: hello from ${second}`);

    // Two seconds without a call: the server process ends, its tools stay offered.
    await expect.poll(() => alive(second), { timeout: 30_000 }).toBe(false);
    expect(status()?.state).toBe("idle");

    h.llm.script({ toolCalls: [{ name: "mcp_m_hello", arguments: {} }] }, (request) => ({
      text: `tool said: ${toolResults(request).at(-1)}`,
    }));
    const again = await chat(h, "say hello again", { sessionId: "lazy-1" });
    expect(toolNames(h.llm.requests.at(-2))).toContain("mcp_m_hello");
    expect(starts()).toHaveLength(3);
    expect(again.text).toBe(`tool said: hello from ${starts()[2]}`);
  });

  it("a remote server that went away is no error once idle: the next call connects again", async () => {
    remote = await startHttpEverything("streamableHttp");
    const port = Number(new URL(remote.url).port);
    harness = await startHarness({
      configYaml: `mcp_servers:\n  remote:\n    url: ${remote.url}\n    transport: streamable_http\n`,
      env: { HERALD_TOOLS_LAZY: "false" },
    });
    const h = harness;
    const status = () => h.gateway.mcp!.status()[0];
    await expect.poll(() => status()?.state, { timeout: 30_000 }).toBe("connected");
    await remote.close();
    const echo = (message: string) =>
      h.llm.script({ toolCalls: [{ name: "mcp_remote_echo", arguments: { message } }] }, (request) => ({
        text: `tool said: ${toolResults(request).at(-1)}`,
      }));
    echo("anyone?");
    expect((await chat(h, "echo while it is down", { sessionId: "lazy-2" })).text).toMatch(
      /^tool said: error: mcp_remote_echo failed: MCP server 'remote' could not be reached during tool echo \(.+\); the next call connects again\.$/,
    );
    expect(status()).toMatchObject({ state: "idle", tools: expect.any(Number) });
    expect(status()?.error).toBeUndefined();

    remote = await startHttpEverything("streamableHttp", port);
    echo("back");
    expect((await chat(h, "echo again", { sessionId: "lazy-2" })).text).toBe("tool said: Echo: back");
    expect(status()?.state).toBe("connected");
  });

  it("deletes the cached list of a server removed from config.yaml at the next start and on /reload-mcp", async () => {
    const marker = (name: string) =>
      `  ${name}:\n    command: ${node}\n    args: [${JSON.stringify(SERVER)}]\n    cwd: .\n    env: { MCP_MARK: ${name}-starts }\n    idle_timeout_s: 2\n`;
    harness = await startHarness({
      configYaml: `mcp_servers:\n${marker("keep")}${marker("gone")}`,
      env: { HERALD_TOOLS_LAZY: "false" },
    });
    const h = harness;
    const rows = () =>
      (
        h.state.database.prepare("SELECT server, definition FROM mcp_tool_cache ORDER BY server").all() as {
          server: string;
          definition: string;
        }[]
      ).map((r) => r.server);
    await expect.poll(rows, { timeout: 30_000 }).toEqual(["gone", "keep"]);
    await expect
      .poll(() => h.gateway.mcp!.status().map((s) => s.state), { timeout: 30_000 })
      .toEqual(["idle", "idle"]);
    const keepStarts = () => readFileSync(join(h.homeDir, "keep-starts"), "utf8").split("\n").filter(Boolean);
    expect(keepStarts()).toHaveLength(1);

    writeFileSync(join(h.homeDir, "config.yaml"), `mcp_servers:\n${marker("keep")}`);
    await h.restart({ rereadConfig: true });
    expect(rows()).toEqual(["keep"]);
    // The server still configured kept its list: it is offered from the cache and not started.
    await expect.poll(() => h.gateway.mcp!.status()[0]?.state, { timeout: 30_000 }).toBe("idle");
    await new Promise((r) => setTimeout(r, 500));
    expect(keepStarts()).toHaveLength(1);

    writeFileSync(join(h.homeDir, "config.yaml"), "mcp_servers: {}\n");
    expect((await chat(h, "/reload-mcp")).text).toBe(
      "Reloading MCP servers: none. I'll say when they are up.",
    );
    expect(rows()).toEqual([]);
  });

  it("mcp_list_resources without a server lists the running servers and starts no idle one", async () => {
    harness = await startHarness({
      configYaml: `mcp_servers:\n  m:\n    command: ${node}\n    args: [${JSON.stringify(SERVER)}]\n    cwd: .\n    env: { MCP_MARK: starts }\n    idle_timeout_s: 2\n  everything:\n    command: ${node}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n    idle_timeout_s: 0\n`,
      env: { HERALD_TOOLS_LAZY: "false" },
    });
    const h = harness;
    const mark = join(h.homeDir, "starts");
    const starts = () => (existsSync(mark) ? readFileSync(mark, "utf8").split("\n").filter(Boolean) : []);
    const states = () => h.gateway.mcp!.status().map((s) => s.state);
    await expect.poll(states, { timeout: 30_000 }).toEqual(["idle", "connected"]);
    expect(starts()).toHaveLength(1);

    h.llm.script({ toolCalls: [{ name: "mcp_list_resources", arguments: {} }] }, { text: "listed" });
    await chat(h, "what resources are there?", { sessionId: "lazy-3" });
    const listed = toolResults(h.llm.requests.at(-1)).at(-1) ?? "";
    expect(listed).toMatch(/^## everything\n- \S+:\/\//);
    expect(listed).toMatch(/\n\nnot started: m — name one as server to start it and list its resources$/);
    expect(listed).not.toContain("## m");
    await new Promise((r) => setTimeout(r, 500));
    expect(starts()).toHaveLength(1);
    expect(states()).toEqual(["idle", "connected"]);
  });
});
