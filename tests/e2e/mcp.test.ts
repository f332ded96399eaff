/**
 * The MCP client through the whole gateway (API server, runner, agent loop): the reference servers
 * from npm over stdio and streamable HTTP, their tools called by the scripted model; include/exclude;
 * what a stdio server's environment holds; a server killed mid-call, then back; /stop cancelling a long
 * call; /reload-mcp picking up a new server.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SAFE_ENV_KEYS } from "../../agent/tools/mcp/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import {
  EVERYTHING_ENTRY,
  FILESYSTEM_ENTRY,
  type HttpEverything,
  startHttpEverything,
} from "../helpers/mcp-servers.js";

let harness: Harness | undefined;
let remote: HttpEverything | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await harness?.stop();
  await remote?.close();
  harness = remote = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const node = JSON.stringify(process.execPath);
/** A tiny SDK server of our own: `add_tool` changes its tool list, `wait` runs until cancelled. */
const FIXTURE = join(import.meta.dirname, "..", "fixtures", "mcp", "list-changing-server.mjs");
const everything = (name: string, extra = "") =>
  `  ${name}:\n    command: ${node}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n${extra}`;

const toolNames = (request: FakeLlmRequest | undefined) => (request?.tools ?? []).map((t) => t.function.name);
const toolResults = (request: FakeLlmRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => messageText(m));

/** A gateway with `servers` (YAML under `mcp_servers:`), every server connected before it returns. */
async function start(servers: string, env: Record<string, string> = {}): Promise<Harness> {
  // Every schema up front (tools.lazy off): these tests read the tool lists as the servers offer them;
  // loading MCP toolsets on demand has its own test (lean-requests.test.ts).
  harness = await startHarness({
    configYaml: `mcp_servers:\n${servers}`,
    env: { HERALD_TOOLS_LAZY: "false", ...env },
  });
  const mcp = harness.gateway.mcp;
  if (!mcp) throw new Error("the gateway has no MCP manager");
  await expect.poll(() => mcp.status().every((s) => s.state === "connected"), { timeout: 20_000 }).toBe(true);
  return harness;
}

async function say(h: Harness, text: string, sessionId = "mcp-1"): Promise<string> {
  const reply = await chat(h, text, { sessionId });
  expect(reply.status).toBe(200);
  return reply.text;
}

describe("MCP client", () => {
  it("calls server-everything and server-filesystem over stdio; include/exclude shape the tool list", async () => {
    const root = mkdtempSync(join(tmpdir(), "herald-mcp-fs-"));
    dirs.push(root);
    writeFileSync(join(root, "notes.txt"), "the launch is on Thursday\n");
    const h = await start(
      `${everything("everything", "    tools:\n      exclude: [get-sum]\n")}` +
        `  fs:\n    command: ${node}\n    args: [${JSON.stringify(FILESYSTEM_ENTRY)}, ${JSON.stringify(root)}]\n` +
        "    tools:\n      include: [list_directory, read_text_file]\n",
    );
    h.llm.script(
      {
        toolCalls: [
          { name: "mcp_everything_echo", arguments: { message: "hello over stdio" } },
          { name: "mcp_fs_list_directory", arguments: { path: root } },
          { name: "mcp_fs_read_text_file", arguments: { path: join(root, "notes.txt") } },
        ],
      },
      { text: "done" },
    );
    expect(await say(h, "use the MCP tools")).toBe("done");
    const [first, second] = h.llm.requests.slice(-2);
    const names = toolNames(first);
    expect(names).toEqual(expect.arrayContaining(["mcp_everything_echo", "mcp_everything_get-env"]));
    expect(names).not.toContain("mcp_everything_get-sum");
    expect(names.filter((n) => n.startsWith("mcp_fs_")).sort()).toEqual([
      "mcp_fs_list_directory",
      "mcp_fs_read_text_file",
    ]);
    expect(names).toEqual(
      expect.arrayContaining(["mcp_list_resources", "mcp_read_resource", "mcp_get_prompt"]),
    );
    // The server's own JSON Schema reaches the model.
    const echo = first?.tools?.find((t) => t.function.name === "mcp_everything_echo");
    expect(echo?.function.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    const [echoed, listed, read] = toolResults(second);
    expect(echoed).toBe("Echo: hello over stdio");
    expect(listed).toContain("[FILE] notes.txt");
    expect(read).toContain("the launch is on Thursday");
  });

  it("gives a stdio server only the safe base and its configured env, never Herald's keys", async () => {
    const h = await start(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's own ${NAME} reference
      everything("everything", '    env:\n      GREETING: hello\n      FROM_DOTENV: "${MCP_TEST_VALUE}"\n'),
      { OPENAI_API_KEY: "sk-herald-secret-key", MCP_TEST_VALUE: "passed-through" },
    );
    h.llm.script({ toolCalls: [{ name: "mcp_everything_get-env", arguments: {} }] }, { text: "ok" });
    await say(h, "print the server's environment");
    const [printed] = toolResults(h.llm.requests.at(-1));
    const env = JSON.parse(printed ?? "{}") as Record<string, string>;
    expect(env["GREETING"]).toBe("hello");
    expect(env["FROM_DOTENV"]).toBe("passed-through");
    expect(printed).not.toContain("sk-herald-secret-key");
    expect(printed).not.toContain("test-key");
    const allowed = new Set([...SAFE_ENV_KEYS, "GREETING", "FROM_DOTENV"]);
    expect(Object.keys(env).filter((k) => !allowed.has(k))).toEqual([]);
  });

  it("reads resources and prompts through the utility tools", async () => {
    const h = await start(everything("everything"));
    h.llm.script(
      {
        toolCalls: [
          { name: "mcp_list_resources", arguments: { server: "everything" } },
          { name: "mcp_get_prompt", arguments: { server: "everything" } },
        ],
      },
      { text: "listed" },
    );
    await say(h, "what does the server offer?");
    const [resources, prompts] = toolResults(h.llm.requests.at(-1));
    expect(resources).toMatch(/^## everything\n- \S+:\/\//);
    expect(prompts).toMatch(/^- \S+/m);
    const uri = /- (\S+:\/\/\S+)/.exec(resources ?? "")?.[1] ?? "";
    h.llm.script(
      { toolCalls: [{ name: "mcp_read_resource", arguments: { server: "everything", uri } }] },
      { text: "read" },
    );
    await say(h, "read the first one");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toContain(`[resource ${uri}`);
  });

  it("refreshes a server's tools on notifications/tools/list_changed", async () => {
    const h = await start(`  dyn:\n    command: ${node}\n    args: [${JSON.stringify(FIXTURE)}]\n`);
    h.llm.script(
      { toolCalls: [{ name: "mcp_dyn_add_tool", arguments: { name: "weather", answer: "sunny" } }] },
      { text: "added" },
    );
    await say(h, "add a weather tool");
    expect(toolNames(h.llm.requests.at(-1))).not.toContain("mcp_dyn_weather");
    await expect.poll(() => h.gateway.mcp?.status()[0]?.tools, { timeout: 10_000 }).toBe(3);
    h.llm.script({ toolCalls: [{ name: "mcp_dyn_weather", arguments: {} }] }, { text: "ok" });
    await say(h, "what's the weather?");
    expect(toolNames(h.llm.requests.at(-2))).toContain("mcp_dyn_weather");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toBe("sunny");
  });

  it("calls server-everything over streamable HTTP", async () => {
    remote = await startHttpEverything("streamableHttp");
    const h = await start(`  remote:\n    url: ${remote.url}\n    transport: streamable_http\n`);
    expect(h.gateway.mcp?.status()[0]).toMatchObject({ transport: "streamable_http", state: "connected" });
    h.llm.script(
      { toolCalls: [{ name: "mcp_remote_echo", arguments: { message: "over http" } }] },
      { text: "ok" },
    );
    await say(h, "echo over http");
    expect(toolResults(h.llm.requests.at(-1))).toEqual(["Echo: over http"]);
  });

  it("a remote server that went away is reconnected once it is back (one kept connected)", async () => {
    remote = await startHttpEverything("streamableHttp");
    const port = Number(new URL(remote.url).port);
    // idle_timeout_s: 0 keeps it connected, reconnecting in the background; a server that stops when
    // idle is connected again by its next call instead (mcp-lazy.test.ts).
    const h = await start(
      `  remote:\n    url: ${remote.url}\n    transport: streamable_http\n    idle_timeout_s: 0\n`,
    );
    await remote.close();
    h.llm.script(
      { toolCalls: [{ name: "mcp_remote_echo", arguments: { message: "anyone?" } }] },
      { text: "ok" },
    );
    await say(h, "echo while it is down");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toMatch(
      /^error: mcp_remote_echo failed: MCP server 'remote' could not be reached during tool echo \(.+\); reconnecting/,
    );
    remote = await startHttpEverything("streamableHttp", port);
    await expect.poll(() => h.gateway.mcp?.status()[0]?.state, { timeout: 20_000 }).toBe("connected");
    h.llm.script(
      { toolCalls: [{ name: "mcp_remote_echo", arguments: { message: "back" } }] },
      { text: "ok" },
    );
    await say(h, "echo again");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toBe("Echo: back");
  });

  it("sends the bearer token bearer_token_env names; a server refusing it is reported, not fatal", async () => {
    remote = await startHttpEverything("streamableHttp");
    const target = new URL(remote.url);
    const seen = new Set<string>();
    const proxy = createServer((req, res) => {
      seen.add(req.headers.authorization ?? "(none)");
      if (req.headers.authorization !== "Bearer right-token")
        return void res.writeHead(401).end("unauthorized");
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
    const servers = `  secured:\n    url: ${url}\n    transport: streamable_http\n    bearer_token_env: REMOTE_TOKEN\n`;
    try {
      const h = await start(servers, { REMOTE_TOKEN: "right-token" });
      h.llm.script(
        { toolCalls: [{ name: "mcp_secured_echo", arguments: { message: "authorised" } }] },
        { text: "ok" },
      );
      await say(h, "echo");
      expect(toolResults(h.llm.requests.at(-1))).toEqual(["Echo: authorised"]);
      expect([...seen]).toEqual(["Bearer right-token"]);
      await h.stop();
      harness = await startHarness({
        configYaml: `mcp_servers:\n${servers}`,
        env: { REMOTE_TOKEN: "wrong" },
      });
      const wrong = harness;
      expect(await say(wrong, "hello")).toBe("echo: hello");
      await expect
        .poll(() => wrong.gateway.mcp?.status()[0], { timeout: 10_000 })
        .toMatchObject({
          state: "retrying",
          error: expect.stringMatching(/HTTP 401.*mcp_servers.secured.bearer_token_env/),
        });
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("falls back to SSE when the server has no streamable HTTP endpoint", async () => {
    remote = await startHttpEverything("sse");
    const h = await start(`  old:\n    url: ${remote.url}\n`);
    expect(h.gateway.mcp?.status()[0]).toMatchObject({ transport: "sse", state: "connected" });
    h.llm.script(
      { toolCalls: [{ name: "mcp_old_echo", arguments: { message: "over sse" } }] },
      { text: "ok" },
    );
    await say(h, "echo over sse");
    expect(toolResults(h.llm.requests.at(-1))).toEqual(["Echo: over sse"]);
  });

  it("a server killed mid-call gives a clear error, then comes back (one kept running)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-mcp-kill-"));
    dirs.push(dir);
    const mark = join(dir, "mark");
    // idle_timeout_s: 0 keeps it running, restarted after a crash; a server that stops when idle is
    // started again by its next call instead (mcp-lazy.test.ts).
    const h = await start(
      `  dyn:\n    command: ${node}\n    args: [${JSON.stringify(FIXTURE)}]\n    env: { CANCEL_MARK: ${JSON.stringify(mark)} }\n    idle_timeout_s: 0\n`,
    );
    const mcp = h.gateway.mcp!;
    const pid = mcp.status()[0]?.pid;
    expect(pid).toBeGreaterThan(0);
    h.llm.script({ toolCalls: [{ name: "mcp_dyn_wait", arguments: {} }] }, (request) => ({
      text: `tool said: ${toolResults(request).at(-1)}`,
    }));
    const pending = say(h, "run the long job");
    await expect
      .poll(() => existsSync(mark) && readFileSync(mark, "utf8"), { timeout: 10_000 })
      .toBe("started");
    process.kill(pid!, "SIGKILL");
    expect(await pending).toMatch(
      /^tool said: error: .*MCP server 'dyn' stopped during tool wait \(connection closed\); it is being restarted/,
    );
    await expect.poll(() => mcp.status()[0], { timeout: 20_000 }).toMatchObject({ state: "connected" });
    expect(mcp.status()[0]?.pid).not.toBe(pid);
    h.llm.script(
      { toolCalls: [{ name: "mcp_dyn_add_tool", arguments: { name: "x", answer: "y" } }] },
      { text: "ok" },
    );
    await say(h, "add a tool");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toBe("added x");
  });

  it("a call the server does not answer within timeout_s ends with an error naming the key", async () => {
    const h = await start(
      `  dyn:\n    command: ${node}\n    args: [${JSON.stringify(FIXTURE)}]\n    timeout_s: 1\n`,
    );
    h.llm.script({ toolCalls: [{ name: "mcp_dyn_wait", arguments: {} }] }, (request) => ({
      text: `tool said: ${toolResults(request).at(-1)}`,
    }));
    expect(await say(h, "wait")).toBe(
      "tool said: error: mcp_dyn_wait failed: MCP server 'dyn' did not answer tool wait within 1 s (mcp_servers.dyn.timeout_s).",
    );
    expect(h.gateway.mcp?.status()[0]).toMatchObject({ state: "connected" });
  });

  it("/stop cancels a long MCP call; the server stays up", async () => {
    const h = await start(everything("everything"));
    h.llm.script({
      toolCalls: [
        { name: "mcp_everything_trigger-long-running-operation", arguments: { duration: 60, steps: 60 } },
      ],
    });
    const pending = chat(h, "run the long job", { sessionId: "mcp-stop" });
    await expect.poll(() => h.llm.requests.length, { timeout: 10_000 }).toBe(1);
    expect(await say(h, "/stop", "mcp-stop")).toBe("⏹ Stopped.");
    const cancelled = await pending;
    expect(cancelled.text).not.toContain("Long running operation completed");
    expect(h.llm.requests).toHaveLength(1);
    expect(h.gateway.mcp?.status()[0]).toMatchObject({ state: "connected" });
    h.llm.script(
      { toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "still here" } }] },
      { text: "ok" },
    );
    await say(h, "echo", "mcp-stop");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toBe("Echo: still here");
  });

  it("/stop sends the server notifications/cancelled for the running call", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-mcp-cancel-"));
    dirs.push(dir);
    const mark = join(dir, "mark");
    const h = await start(
      `  dyn:\n    command: ${node}\n    args: [${JSON.stringify(FIXTURE)}]\n    env: { CANCEL_MARK: ${JSON.stringify(mark)} }\n`,
    );
    h.llm.script({ toolCalls: [{ name: "mcp_dyn_wait", arguments: {} }] });
    const pending = chat(h, "wait for it", { sessionId: "mcp-cancel" });
    await expect
      .poll(() => existsSync(mark) && readFileSync(mark, "utf8"), { timeout: 10_000 })
      .toBe("started");
    expect(await say(h, "/stop", "mcp-cancel")).toBe("⏹ Stopped.");
    await pending;
    await expect
      .poll(() => existsSync(mark) && readFileSync(mark, "utf8"), { timeout: 10_000 })
      .toBe("cancelled");
  });

  it("a server that never connects: the gateway answers, its calls fail at once; /reload-mcp swaps the servers", async () => {
    harness = await startHarness({
      configYaml: `mcp_servers:\n  broken:\n    command: ${node}\n    args: ["-e", "process.exit(3)"]\n${everything("old")}`,
    });
    const h = harness;
    expect(await say(h, "hello")).toBe("echo: hello");
    await expect.poll(() => h.gateway.mcp?.status()[0]?.state, { timeout: 10_000 }).toBe("retrying");
    await expect.poll(() => h.gateway.mcp?.status()[1]?.state, { timeout: 20_000 }).toBe("connected");
    h.llm.script(
      { toolCalls: [{ name: "mcp_list_resources", arguments: { server: "broken" } }] },
      { text: "ok" },
    );
    await say(h, "list resources");
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toMatch(
      /^## broken\nerror: MCP server 'broken' is not available: it is restarting \(attempt \d+; last error: .+\)/,
    );
    writeFileSync(join(h.homeDir, "config.yaml"), `mcp_servers:\n${everything("fresh")}`);
    expect(await say(h, "/reload-mcp")).toBe("Reloading MCP servers: fresh. I'll say when they are up.");
    await expect
      .poll(() => h.gateway.mcp?.status(), { timeout: 20_000 })
      .toEqual([expect.objectContaining({ name: "fresh", state: "connected" })]);
    h.llm.script(
      { toolCalls: [{ name: "mcp_fresh_echo", arguments: { message: "reloaded" } }] },
      { text: "ok" },
    );
    await say(h, "echo");
    // MCP toolsets load on demand: the system prompt lists the new server's tools, not the old one's,
    // and the model's call to one runs it.
    const system = messageText(h.llm.requests.at(-2)?.messages[0]);
    expect(system).toContain("mcp_fresh_echo");
    expect(system).not.toContain("mcp_old_");
    expect(toolNames(h.llm.requests.at(-2)).filter((n) => n.startsWith("mcp_old_"))).toEqual([]);
    expect(toolResults(h.llm.requests.at(-1)).at(-1)).toBe("Echo: reloaded");
  });
});
