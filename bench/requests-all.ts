/**
 * What the model is sent with EVERY toolset on (terminal, files, web, voice, vision, send_message,
 * clarify, todo, the MCP tools of server-everything, a plugin), lazy tools on (the default) and off
 * (`tools.lazy: false`, every schema every request: the behaviour before): request bytes of a first turn
 * with an empty history, the stable prefix two consecutive requests of a session share, and the
 * gateway's CPU per turn. The gateway runs as its own process (`herald gateway` from dist/), so its CPU
 * is its own; the fake model in this process keeps every request body.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "../tests/fakes/llm/index.js";
import { EVERYTHING_ENTRY } from "../tests/helpers/mcp-servers.js";
import { cpuSeconds, median, postTurn, round, spawnGateway, startFlags } from "./lib.js";

export interface AllToolsetsBenchOptions {
  root: string;
  /** Turns of the session whose requests are compared. */
  turns: number;
  /** Turns (after a warm-up) the CPU per turn is measured over. */
  cpuTurns: number;
}

export interface AllToolsetsResult {
  lazy: boolean;
  /** Tool schemas in the first request / tools the turn may call. */
  toolsSent: number;
  toolsEnabled: number;
  firstTurnBytes: number;
  toolSchemaBytes: number;
  systemPromptBytes: number;
  /** Shared prefix bytes / the later request's bytes, per consecutive pair of the session's requests. */
  shareMedian: number;
  shareMin: number;
  /** The pair after `load_tools` added the terminal schemas (lazy only). */
  shareAfterLoad?: number | undefined;
  lastTurnBytes: number;
  /** The gateway process's CPU per turn (all its threads). */
  cpuMsPerTurn: number;
}

const TOOLSETS = "core,cron,memory,skills,terminal,files,web,voice,vision,messaging";

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** A HERALD_HOME with server-everything over stdio and the sample plugin. */
function homeWithEverything(root: string): string {
  const home = mkdtempSync(join(tmpdir(), "herald-bench-all-"));
  const node = JSON.stringify(process.execPath);
  writeFileSync(
    join(home, "config.yaml"),
    `mcp_servers:\n  everything:\n    command: ${node}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
  );
  mkdirSync(join(home, "plugins"));
  cpSync(join(root, "examples/plugins/notes"), join(home, "plugins/notes"), { recursive: true });
  return home;
}

/** Scripts the session: every third turn calls session_search; turn 4 loads and runs terminal. */
function scriptTurn(llm: FakeLlm, i: number): void {
  if (i === 3) {
    llm.script(
      { toolCalls: [{ name: "load_tools", arguments: { toolsets: ["terminal"] } }] },
      { toolCalls: [{ name: "terminal", arguments: { command: "true" } }] },
      { text: "Ran it: nothing to report." },
    );
  } else if (i % 3 === 2) {
    llm.script(
      { toolCalls: [{ name: "session_search", arguments: { query: `topic ${i}` } }] },
      { text: `Nothing earlier about topic ${i}; here is what I know now.` },
    );
  } else {
    llm.script({ text: `Answer ${i}: a paragraph of a usual length for a chat reply. `.repeat(4) });
  }
}

async function measure(
  options: AllToolsetsBenchOptions,
  lazy: boolean,
  llm: FakeLlm,
): Promise<AllToolsetsResult> {
  const home = homeWithEverything(options.root);
  const gateway = await spawnGateway(
    {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      HERALD_LEARNING_ENABLED: "false",
      HERALD_TOOLSETS: TOOLSETS,
      HERALD_TOOLS_LAZY: String(lazy),
      HERALD_EXEC_DANGEROUS_COMMANDS: "off",
      HERALD_WEB_SEARCH_PROVIDER: "searxng",
      HERALD_WEB_SEARCH_URL: "http://127.0.0.1:9/search",
      HERALD_TTS_URL: "http://127.0.0.1:9/v1",
      HERALD_TTS_MODEL: "tts-1",
      HERALD_TTS_VOICE: "alloy",
      HERALD_VISION_URL: "http://127.0.0.1:9/v1",
      HERALD_VISION_MODEL: "vision-model",
    },
    options.root,
    startFlags(options.root),
  );
  try {
    // The MCP server connects in the background: wait until a turn's tools (or its list) name it.
    const session = `all-${lazy}`;
    for (let tries = 0; ; tries++) {
      llm.bodies.length = 0;
      await postTurn(gateway.url, "warm up", `probe-${tries}`);
      if (llm.bodies.at(-1)?.includes("mcp_everything_echo")) break;
      if (tries > 100) throw new Error("server-everything never connected");
      await new Promise((r) => setTimeout(r, 200));
    }
    llm.bodies.length = 0;
    for (let i = 0; i < options.turns; i++) {
      scriptTurn(llm, i);
      await postTurn(gateway.url, `Question ${i}: what next?`, session);
    }
    const bodies = [...llm.bodies];
    const first = JSON.parse(bodies[0]!) as {
      tools?: unknown[];
      messages: { role: string; content: string }[];
    };
    const shares = bodies.slice(1).map((b, i) => commonPrefix(bodies[i]!, b) / b.length);
    const loadAt = bodies.findIndex((b) => b.includes('"name":"load_tools","arguments"'));
    // CPU per turn: plain turns in fresh sessions of 5 turns each, after a warm-up.
    for (let i = 0; i < 20; i++) await postTurn(gateway.url, `warm ${i}`, `warm-${i % 4}`);
    const pid = gateway.child.pid!;
    const before = cpuSeconds(pid);
    for (let i = 0; i < options.cpuTurns; i++)
      await postTurn(gateway.url, `Question ${i}: what next?`, `cpu-${Math.floor(i / 5)}`);
    const cpuMsPerTurn = ((cpuSeconds(pid) - before) * 1000) / options.cpuTurns;
    return {
      lazy,
      toolsSent: first.tools?.length ?? 0,
      toolsEnabled: 0,
      firstTurnBytes: Buffer.byteLength(bodies[0]!),
      toolSchemaBytes: Buffer.byteLength(JSON.stringify(first.tools ?? [])),
      systemPromptBytes: Buffer.byteLength(first.messages.find((m) => m.role === "system")?.content ?? ""),
      shareMedian: round(median(shares) * 100, 1),
      shareMin: round(Math.min(...shares) * 100, 1),
      // The request after the one that called load_tools is the first to carry the terminal schemas.
      shareAfterLoad: lazy && loadAt >= 0 ? round((shares[loadAt] ?? 0) * 100, 1) : undefined,
      lastTurnBytes: Buffer.byteLength(bodies.at(-1)!),
      cpuMsPerTurn: round(cpuMsPerTurn, 2),
    };
  } finally {
    await gateway.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/** Both modes, one after the other, against one fake model. */
export async function benchAllToolsets(options: AllToolsetsBenchOptions): Promise<AllToolsetsResult[]> {
  const llm = await startFakeLlm();
  try {
    const off = await measure(options, false, llm);
    const on = await measure(options, true, llm);
    on.toolsEnabled = off.toolsSent;
    off.toolsEnabled = off.toolsSent;
    return [on, off];
  } finally {
    await llm.close();
  }
}

export function allToolsetsMarkdown(
  [on, off]: AllToolsetsResult[],
  options: AllToolsetsBenchOptions,
): string {
  const kb = (n: number) => `${round(n / 1024, 1)} KB`;
  const row = (r: AllToolsetsResult | undefined) =>
    r
      ? `| ${r.lazy ? "**lazy** (default)" : "`tools.lazy: false` (before)"} | ${r.toolsSent} of ${r.toolsEnabled} | **${kb(r.firstTurnBytes)}** (schemas ${kb(r.toolSchemaBytes)}, system prompt ${kb(r.systemPromptBytes)}) | ${r.shareMedian} % (${r.shareMin} %)${r.shareAfterLoad === undefined ? "" : `; ${r.shareAfterLoad} % at the load`} | ${kb(r.lastTurnBytes)} | ${r.cpuMsPerTurn} ms |`
      : "";
  return `### Every toolset on

The same, with every toolset enabled (${TOOLSETS}, the MCP tools of server-everything over stdio, the
sample plugin), the gateway as its own process (\`herald gateway\` from dist/, \`npm start\`'s flags). One
session of ${options.turns} turns (every third calls \`session_search\`, the fourth loads \`terminal\` and runs
\`true\` in the sandbox); CPU: the gateway process's CPU over ${options.cpuTurns} plain turns in sessions of 5, after
20 warm-up turns.

| mode | tool schemas sent, first turn | request bytes, first turn, empty history | stable prefix, consecutive requests: median (min) | request bytes, turn ${options.turns} | gateway CPU per turn |
|---|---|---|---|---|---|
${row(on)}
${row(off)}

Targets: ≤ 12 KB for a first turn, ≥ 95 % stable prefix. For comparison, the issue reports OpenClaw at
59 KB per turn with 11 tools. Lazy tools send the eager toolsets' schemas (\`tools.eager\`: core, memory,
skills) and \`load_tools\`, and list the other toolsets by name and tool names in the system prompt; a
loaded toolset's schemas are appended after them for the rest of the session. A smaller request makes
the same new messages a larger share of it, so the prefix share is lower than with every schema while
the bytes not shared are the same: only the new messages (and, once, everything after the tools when a
toolset loads).`;
}
