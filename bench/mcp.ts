/**
 * MCP client cost. (1) One `echo` call of server-everything over stdio: straight through the SDK's
 * Client, and through Herald's tool path in-process (registry → MCP tool → manager → SDK → result
 * conversion); the difference is what Herald adds. (2) Whole turns through the gateway process (as
 * npm start runs it): a turn whose model calls `mcp_everything_echo`, against a turn without a tool.
 * (3) Gateway start with 5 stdio servers configured: time until the API answers (against none), and
 * until all five servers' tools answer.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolRegistry } from "../agent/tool-registry.js";
import { McpManager, resolveMcpServers } from "../agent/tools/mcp/index.js";
import { mcpServerTools } from "../agent/tools/mcp/tools.js";
import { silentLogger } from "../core/logger.js";
import type { FakeLlmRequest } from "../tests/fakes/llm/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { EVERYTHING_ENTRY } from "../tests/helpers/mcp-servers.js";
import { machineLine, percentile, postTurn, round, spawnGateway, startFlags } from "./lib.js";

export interface McpBenchOptions {
  root: string;
  /** Calls per in-process series. */
  calls: number;
  /** Turns per gateway series. */
  turns: number;
  /** Gateway starts per configuration. */
  starts: number;
  servers: number;
}

export interface McpBenchResult {
  directP50Ms: number;
  directP99Ms: number;
  heraldP50Ms: number;
  heraldP99Ms: number;
  plainTurnP50Ms: number;
  plainTurnP99Ms: number;
  toolTurnP50Ms: number;
  toolTurnP99Ms: number;
  startNoneP50Ms: number;
  startWithServersP50Ms: number;
  serversAnsweringP50Ms: number;
}

const p = (values: number[], q: number) => round(percentile(values, q));

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** (1): the SDK alone, and Herald's tool path, on one server-everything each. */
async function inProcess(calls: number): Promise<{ direct: number[]; herald: number[] }> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [EVERYTHING_ENTRY, "stdio"],
      stderr: "ignore",
    }),
  );
  const direct: number[] = [];
  for (let i = 0; i < calls + 50; i++) {
    const ms = await timed(() => client.callTool({ name: "echo", arguments: { message: `m${i}` } }));
    if (i >= 50) direct.push(ms);
  }
  await client.close();

  const [config] = resolveMcpServers(
    { everything: mcpConfig() },
    { PATH: process.env["PATH"], HOME: process.env["HOME"] },
  );
  const manager = new McpManager({ servers: [config!], logger: silentLogger() });
  manager.start();
  await manager.ready();
  const registry = new ToolRegistry().register(...mcpServerTools(manager.get("everything")!));
  const allowed = registry.forToolsets(["mcp_everything"]);
  const ctx = {
    signal: new AbortController().signal,
    origin: {
      sessionId: "s",
      sessionKey: "k",
      chat: { platform: "api", chatId: "c" },
      chatType: "dm" as const,
      userId: "u",
    },
    state: { searchSessions: async () => [] },
    logger: silentLogger(),
    homeDir: tmpdir(),
    progress: () => undefined,
  };
  const herald: number[] = [];
  for (let i = 0; i < calls + 50; i++) {
    const call = {
      id: `c${i}`,
      type: "function" as const,
      function: { name: "mcp_everything_echo", arguments: `{"message":"m${i}"}` },
    };
    const ms = await timed(async () => {
      const out = await registry.run(call, allowed, ctx);
      if (out.isError) throw new Error(out.content);
    });
    if (i >= 50) herald.push(ms);
  }
  await manager.stop();
  return { direct, herald };
}

/** One server-everything entry as config.yaml's section has it (parsed). */
function mcpConfig() {
  return {
    command: process.execPath,
    args: [EVERYTHING_ENTRY, "stdio"],
    env: {},
    transport: "auto" as const,
    headers: {},
    enabled: true,
    timeoutS: 60,
    idleTimeoutS: 0,
    tools: { include: [], exclude: [] },
    groups: false,
    access: "owners" as const,
  };
}

/** A HERALD_HOME whose config.yaml has `servers` server-everything entries named s1…sN. */
function homeWith(servers: number): string {
  const home = mkdtempSync(join(tmpdir(), "herald-bench-mcp-"));
  mkdirSync(home, { recursive: true });
  const entries = Array.from(
    { length: servers },
    (_, i) =>
      `  s${i + 1}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
  );
  writeFileSync(join(home, "config.yaml"), servers ? `mcp_servers:\n${entries.join("")}` : "timezone: UTC\n");
  return home;
}

const TOOL_MARK = "mcp-echo";
const ALL_MARK = "mcp-all";

function model(servers: number) {
  return (request: FakeLlmRequest) => {
    const last = request.messages.at(-1);
    if (last?.role === "tool") {
      const results = request.messages.slice(-servers).map((m) => String(m.content ?? ""));
      return { text: results.every((r) => r.startsWith("Echo:")) ? "all" : "not yet" };
    }
    const text = typeof last?.content === "string" ? last.content : "";
    if (text.startsWith(TOOL_MARK))
      return { toolCalls: [{ name: "mcp_s1_echo", arguments: { message: "hi" } }] };
    if (text.startsWith(ALL_MARK))
      return {
        toolCalls: Array.from({ length: servers }, (_, i) => ({
          name: `mcp_s${i + 1}_echo`,
          arguments: { message: "hi" },
        })),
      };
    return { text: "ok" };
  };
}

export async function benchMcp(options: McpBenchOptions): Promise<McpBenchResult> {
  const { direct, herald } = await inProcess(options.calls);
  const llm = await startFakeLlm({ keepRequests: true });
  const env = (home: string) => ({
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "bench",
    HERALD_MODEL: "fake-model",
    HERALD_HOME: home,
  });
  const lastAnswer = () => {
    const last = llm.requests.at(-1)?.messages.at(-1);
    return last?.role === "tool" ? "tool" : "";
  };
  try {
    // (3) Start: none, then N servers; the API answers first, the servers' tools a little later.
    const startNone: number[] = [];
    const startWith: number[] = [];
    const answering: number[] = [];
    for (let i = 0; i < options.starts; i++) {
      for (const servers of [0, options.servers]) {
        const home = homeWith(servers);
        llm.setDefault(model(servers));
        const gw = await spawnGateway(env(home), options.root, startFlags(options.root));
        (servers ? startWith : startNone).push(gw.coldStartMs);
        if (servers) {
          const began = performance.now() - gw.coldStartMs;
          for (;;) {
            llm.requests.length = 0;
            await postTurn(gw.url, `${ALL_MARK} ${i}`, `probe-${i}`);
            const reply = llm.requests.at(-1);
            const all =
              reply?.messages
                .filter((m) => m.role === "tool")
                .slice(-servers)
                .every((m) => String(m.content).startsWith("Echo:")) ?? false;
            if (all && lastAnswer() === "tool") break;
            await new Promise((r) => setTimeout(r, 20));
          }
          answering.push(performance.now() - began);
        }
        await gw.stop();
        rmSync(home, { recursive: true, force: true });
      }
    }

    // (2) Turns through the gateway with one server.
    const home = homeWith(1);
    llm.setDefault(model(1));
    const gw = await spawnGateway(env(home), options.root, startFlags(options.root));
    const plain: number[] = [];
    const tool: number[] = [];
    try {
      for (let i = 0; i < 20; i++) await postTurn(gw.url, `${TOOL_MARK} warm ${i}`, `warm-${i}`);
      for (let i = 0; i < options.turns; i++) {
        llm.requests.length = 0;
        plain.push(await timed(() => postTurn(gw.url, `plain ${i}`, `plain-${i % 20}`)));
        tool.push(await timed(() => postTurn(gw.url, `${TOOL_MARK} ${i}`, `tool-${i % 20}`)));
      }
    } finally {
      await gw.stop();
      rmSync(home, { recursive: true, force: true });
    }
    return {
      directP50Ms: p(direct, 50),
      directP99Ms: p(direct, 99),
      heraldP50Ms: p(herald, 50),
      heraldP99Ms: p(herald, 99),
      plainTurnP50Ms: p(plain, 50),
      plainTurnP99Ms: p(plain, 99),
      toolTurnP50Ms: p(tool, 50),
      toolTurnP99Ms: p(tool, 99),
      startNoneP50Ms: p(startNone, 50),
      startWithServersP50Ms: p(startWith, 50),
      serversAnsweringP50Ms: p(answering, 50),
    };
  } finally {
    await llm.close();
  }
}

export function mcpMarkdown(r: McpBenchResult, options: McpBenchOptions, command: string): string {
  return `## MCP tool calls and start with MCP servers

Command: \`${command}\` — ${machineLine()}. server-everything (from npm) over stdio.

| what | p50 | p99 |
|---|---|---|
| \`echo\` straight through the SDK's Client (${options.calls} calls) | ${r.directP50Ms} ms | ${r.directP99Ms} ms |
| \`echo\` through Herald's tool path in-process: registry, MCP tool, manager, SDK, result conversion (${options.calls} calls) | ${r.heraldP50Ms} ms | ${r.heraldP99Ms} ms |
| **added by Herald** | **${round(r.heraldP50Ms - r.directP50Ms)} ms** | ${round(r.heraldP99Ms - r.directP99Ms)} ms |
| turn without a tool, through the gateway process (${options.turns} turns, interleaved) | ${r.plainTurnP50Ms} ms | ${r.plainTurnP99Ms} ms |
| turn calling \`mcp_s1_echo\` (a second model round trip included) | ${r.toolTurnP50Ms} ms | ${r.toolTurnP99Ms} ms |

Target: ≤ 2 ms p50 added over the SDK call. The p99s are this shared machine's scheduling noise (two series run one
after the other), not the path: a negative difference says as much.

Gateway start (spawn to \`/health\` answering, ${options.starts} starts each, p50): no MCP servers **${r.startNoneP50Ms} ms**,
${options.servers} stdio servers configured **${r.startWithServersP50Ms} ms** (the servers connect in the background);
all ${options.servers} servers' tools answering a turn: ${r.serversAnsweringP50Ms} ms after spawn. Target: API answering within 1 s.
The gateway awaits no server: they are started after its HTTP server listens. What the servers add to the
first answer is their start-up competing for the CPU (each is a Node process loading its SDK) on this
shared 2-core machine; the figure without servers is the floor of this host at the time of the run.`;
}
