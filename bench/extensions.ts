/**
 * What plugins and the MCP server cost, through a gateway in its own process (npm start's flags): a
 * turn whose model calls a plugin's tool (with pass-through hooks at every point) against the same turn
 * without a tool; a call of Herald's MCP tools over streamable HTTP and over stdio through
 * `herald mcp serve`; and the gateway's cold start with five plugins against none.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FakeLlmRequest } from "../tests/fakes/llm/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, median, percentile, round, spawnGateway, startFlags } from "./lib.js";

export interface ExtensionsBenchOptions {
  root: string;
  /** Turns per series (with the plugin tool, without). */
  turns: number;
  /** MCP calls per transport. */
  mcpCalls: number;
  /** Cold starts per variant (the median is reported). */
  starts: number;
}

export interface ExtensionsBenchResult {
  plain: [p50: number, p99: number];
  plugin: [p50: number, p99: number];
  overhead: [p50: number, p99: number];
  mcpHttp: [p50: number, p99: number];
  mcpStdio: [p50: number, p99: number];
  coldStartNoneMs: number;
  coldStartFiveMs: number;
  /** The machine's 1-minute load average when the scenario started (it is shared). */
  loadAverage: number;
}

const KEY = "bench-key-0123456789abcdef";
const MARK = "plugin-call";

/** A plugin with one tool and a pass-through hook at every point. */
function pluginSource(tool: string): string {
  return `import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [{ name: ${JSON.stringify(tool)}, description: "echo", parameters: z.object({ text: z.string() }),
    execute: ({ text }) => text }],
  hooks: {
    inbound: () => undefined,
    beforeToolCall: () => undefined,
    afterToolCall: () => undefined,
    beforeReply: () => undefined,
    turnFinished: () => undefined,
  },
});
`;
}

function writePlugins(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-plugins-"));
  for (let i = 1; i <= count; i++) {
    mkdirSync(join(dir, `bench${i}`));
    writeFileSync(
      join(dir, `bench${i}/plugin.json`),
      JSON.stringify({ name: `bench${i}`, version: "1.0.0" }),
    );
    writeFileSync(join(dir, `bench${i}/index.js`), pluginSource(`bench_echo_${i}`));
  }
  return dir;
}

function model(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: "done" };
  const text = typeof last?.content === "string" ? last.content : "";
  if (text.startsWith(MARK)) return { toolCalls: [{ name: "bench_echo_1", arguments: { text: "hi" } }] };
  return { text: "ok" };
}

const agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });

/** One non-streaming turn with the API key. */
function turn(url: string, text: string, sessionId: string): Promise<void> {
  const body = JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-herald-session-id": sessionId,
          authorization: `Bearer ${KEY}`,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`turn: ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const pair = (values: number[]): [number, number] => [
  round(percentile(values, 50)),
  round(percentile(values, 99)),
];

/** Alternating calls on both clients (after 100 warm-up calls each), so noise weighs on both alike. */
async function mcpSeries(clients: Client[], calls: number): Promise<number[][]> {
  const call = (c: Client) => c.callTool({ name: "sessions_list", arguments: { limit: 5 } });
  for (let i = 0; i < 100; i++) for (const c of clients) await call(c);
  const times = clients.map(() => [] as number[]);
  for (let i = 0; i < calls; i++)
    for (const [k, c] of clients.entries()) times[k]!.push(await timed(() => call(c)));
  return times;
}

export async function benchExtensions(options: ExtensionsBenchOptions): Promise<ExtensionsBenchResult> {
  const loadAverage = round(loadavg()[0] ?? 0, 1);
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(model);
  const one = writePlugins(1);
  const five = writePlugins(5);
  const env = (plugins: string) => ({
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "bench",
    HERALD_MODEL: "fake-model",
    API_SERVER_KEY: KEY,
    HERALD_PLUGINS_DIR: plugins,
    HERALD_LEARNING_ENABLED: "false",
  });
  const flags = startFlags(options.root);
  try {
    const none = mkdtempSync(join(tmpdir(), "herald-bench-plugins-"));
    const starts: { none: number[]; five: number[] } = { none: [], five: [] };
    for (let i = 0; i < options.starts; i++) {
      for (const [name, dir] of [
        ["none", none],
        ["five", five],
      ] as const) {
        const gw = await spawnGateway(env(dir), options.root, flags);
        starts[name].push(gw.coldStartMs);
        await gw.stop();
      }
    }
    rmSync(none, { recursive: true, force: true });

    const gw = await spawnGateway(env(one), options.root, flags);
    try {
      for (let i = 0; i < 20; i++) await turn(gw.url, `${MARK} warm ${i}`, `warm-${i % 5}`);
      const plain: number[] = [];
      const plugin: number[] = [];
      for (let i = 0; i < options.turns; i++) {
        plain.push(await timed(() => turn(gw.url, `plain ${i}`, `plain-${i % 20}`)));
        plugin.push(await timed(() => turn(gw.url, `${MARK} ${i}`, `plugin-${i % 20}`)));
      }

      const http = new Client({ name: "bench", version: "1" });
      await http.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${KEY}` } },
        }),
      );
      const stdio = new Client({ name: "bench", version: "1" });
      await stdio.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [join(options.root, "dist/app/cli.js"), "mcp", "serve"],
          env: {
            ...(process.env as Record<string, string>),
            HERALD_HOME: gw.homeDir,
            API_SERVER_KEY: KEY,
            HERALD_GATEWAY_URL: gw.url,
          },
          stderr: "ignore",
        }),
      );
      const [mcpHttp, mcpStdio] = (await mcpSeries([http, stdio], options.mcpCalls)) as [number[], number[]];
      await http.close();
      await stdio.close();
      return {
        plain: pair(plain),
        plugin: pair(plugin),
        overhead: [
          round(percentile(plugin, 50) - percentile(plain, 50)),
          round(percentile(plugin, 99) - percentile(plain, 99)),
        ],
        mcpHttp: pair(mcpHttp),
        mcpStdio: pair(mcpStdio),
        coldStartNoneMs: round(median(starts.none), 0),
        coldStartFiveMs: round(median(starts.five), 0),
        loadAverage,
      };
    } finally {
      await gw.stop();
    }
  } finally {
    await llm.close();
    rmSync(one, { recursive: true, force: true });
    rmSync(five, { recursive: true, force: true });
  }
}

export function extensionsMarkdown(
  r: ExtensionsBenchResult,
  o: ExtensionsBenchOptions,
  command: string,
): string {
  return `## Plugins and the MCP server

Command: \`${command}\` — ${machineLine()}. The gateway runs as its own process with npm start's flags and
\`API_SERVER_KEY\`; the fake model answers at once. A plugin's tool call costs a second model round trip
(the answer after the tool result), which the overhead includes.

| figure | p50 / p99 |
|---|---|
| turn without a tool (one plugin loaded, pass-through hooks at all five points) | ${r.plain[0]} / ${r.plain[1]} ms |
| turn whose model calls the plugin's tool | ${r.plugin[0]} / ${r.plugin[1]} ms |
| **plugin tool call overhead** (the difference) | **${r.overhead[0]} / ${r.overhead[1]} ms** |
| MCP \`sessions_list\` over streamable HTTP (\`/mcp\`, SDK client) | ${r.mcpHttp[0]} / ${r.mcpHttp[1]} ms |
| MCP \`sessions_list\` over stdio (\`herald mcp serve\` bridging to \`/mcp\`) | ${r.mcpStdio[0]} / ${r.mcpStdio[1]} ms |
| gateway cold start (spawn → /health), no plugins / five plugins, median of ${o.starts} | ${r.coldStartNoneMs} / ${r.coldStartFiveMs} ms |

${o.turns} turns per series, interleaved; ${o.mcpCalls} MCP calls per transport, alternating, after 100 warm-up calls each.
The machine was shared (1-minute load average ${r.loadAverage} at the start): the p99s and the cold starts
carry that noise; the p50s of the interleaved series are the figures to compare.`;
}
