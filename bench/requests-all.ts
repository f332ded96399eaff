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
import { cpuSeconds, type GatewayProcess, median, postTurn, round, spawnGateway, startFlags } from "./lib.js";

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
  /** The lowest share of the other pairs. */
  shareMinOther: number;
  lastTurnBytes: number;
  /** The gateway process's CPU per turn (all its threads), median of the rounds. */
  cpuMsPerTurn: number;
  /** Each round's figure. */
  cpuRoundsMs: number[];
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

interface Running {
  lazy: boolean;
  gateway: GatewayProcess;
  home: string;
}

async function startMode(options: AllToolsetsBenchOptions, lazy: boolean, llm: FakeLlm): Promise<Running> {
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
  // The MCP server connects in the background: wait until a turn's tools (or its list) name it.
  for (let tries = 0; ; tries++) {
    llm.bodies.length = 0;
    await postTurn(gateway.url, "warm up", `probe-${tries}`);
    if (llm.bodies.at(-1)?.includes("mcp_everything_echo")) break;
    if (tries > 100) throw new Error("server-everything never connected");
    await new Promise((r) => setTimeout(r, 200));
  }
  return { lazy, gateway, home };
}

/** The session's request figures of one mode (its CPU is filled in later). */
async function sessionFigures(
  options: AllToolsetsBenchOptions,
  { lazy, gateway }: Running,
  llm: FakeLlm,
): Promise<AllToolsetsResult> {
  llm.bodies.length = 0;
  for (let i = 0; i < options.turns; i++) {
    scriptTurn(llm, i);
    await postTurn(gateway.url, `Question ${i}: what next?`, `all-${lazy}`);
  }
  const bodies = [...llm.bodies];
  const first = JSON.parse(bodies[0]!) as {
    tools?: unknown[];
    messages: { role: string; content: string }[];
  };
  const shares = bodies.slice(1).map((b, i) => commonPrefix(bodies[i]!, b) / b.length);
  // The first request holding the load_tools call is the first to carry the terminal schemas.
  const loadAt = bodies.findIndex((b) => b.includes('"name":"load_tools","arguments"'));
  return {
    lazy,
    toolsSent: first.tools?.length ?? 0,
    toolsEnabled: 0,
    firstTurnBytes: Buffer.byteLength(bodies[0]!),
    toolSchemaBytes: Buffer.byteLength(JSON.stringify(first.tools ?? [])),
    systemPromptBytes: Buffer.byteLength(first.messages.find((m) => m.role === "system")?.content ?? ""),
    shareMedian: round(median(shares) * 100, 1),
    shareMin: round(Math.min(...shares) * 100, 1),
    shareMinOther: round(Math.min(...shares.filter((_, i) => !lazy || i !== loadAt - 1)) * 100, 1),
    shareAfterLoad: lazy && loadAt > 0 ? round((shares[loadAt - 1] ?? 0) * 100, 1) : undefined,
    lastTurnBytes: Buffer.byteLength(bodies.at(-1)!),
    cpuMsPerTurn: 0,
    cpuRoundsMs: [],
  };
}

/** CPU ms per plain turn (sessions of 5 turns) of one round on one gateway process. */
async function cpuRound(running: Running, turns: number, round: number): Promise<number> {
  const pid = running.gateway.child.pid!;
  const before = cpuSeconds(pid);
  for (let i = 0; i < turns; i++)
    await postTurn(running.gateway.url, `Question ${i}: what next?`, `cpu-${round}-${Math.floor(i / 5)}`);
  return ((cpuSeconds(pid) - before) * 1000) / turns;
}

/**
 * Both modes against one fake model, both gateways running: the request figures one mode after the
 * other, then the CPU in rounds alternating between the two (the machine's other load hits both alike).
 */
export async function benchAllToolsets(options: AllToolsetsBenchOptions): Promise<AllToolsetsResult[]> {
  const llm = await startFakeLlm();
  const running: Running[] = [];
  try {
    running.push(await startMode(options, true, llm), await startMode(options, false, llm));
    const results: AllToolsetsResult[] = [];
    for (const mode of running) results.push(await sessionFigures(options, mode, llm));
    for (const mode of running)
      for (let i = 0; i < 20; i++) await postTurn(mode.gateway.url, `warm ${i}`, `warm-${i % 4}`);
    const rounds = 6;
    const cpu: number[][] = running.map(() => []);
    for (let r = 0; r < rounds; r++)
      for (const [i, mode] of running.entries())
        cpu[i]!.push(await cpuRound(mode, Math.ceil(options.cpuTurns / rounds), r));
    for (const [i, result] of results.entries()) {
      result.cpuMsPerTurn = round(median(cpu[i]!), 2);
      result.cpuRoundsMs = cpu[i]!.map((ms) => round(ms, 2));
      result.toolsEnabled = results[1]!.toolsSent;
    }
    return results;
  } finally {
    for (const mode of running) {
      await mode.gateway.stop();
      rmSync(mode.home, { recursive: true, force: true });
    }
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
      ? `| ${r.lazy ? "**lazy** (default)" : "`tools.lazy: false` (before)"} | ${r.toolsSent} of ${r.toolsEnabled} | **${kb(r.firstTurnBytes)}** (schemas ${kb(r.toolSchemaBytes)}, system prompt ${kb(r.systemPromptBytes)}) | ${r.shareMedian} % (${r.shareMinOther} %)${r.shareAfterLoad === undefined ? "" : `; ${r.shareAfterLoad} % once, at the load`} | ${kb(r.lastTurnBytes)} | ${r.cpuMsPerTurn} ms |`
      : "";
  return `### Every toolset on

The same, with every toolset enabled (${TOOLSETS.split(",").join(", ")}, the MCP tools of server-everything over stdio, the
sample plugin), the gateway as its own process (\`herald gateway\` from dist/, \`npm start\`'s flags). One
session of ${options.turns} turns (every third calls \`session_search\`, the fourth loads \`terminal\` and runs
\`true\` in the sandbox). CPU: both gateways running at once, ${options.cpuTurns} plain turns each (sessions of 5, after 20
warm-up turns) in 6 rounds alternating between them; the median round of each gateway process's CPU.

| mode | tool schemas sent, first turn | request bytes, first turn, empty history | stable prefix, consecutive requests: median (min of the others) | request bytes, turn ${options.turns} | gateway CPU per turn |
|---|---|---|---|---|---|
${row(on)}
${row(off)}

The built-in tools' 22 schemas (every toolset, no MCP server or plugin) went from 15,105 to 14,493 bytes
(−4 %): zod's filler is left out (safe-integer bounds, \`minLength: 1\`; the arguments are still validated)
and two descriptions said the same thing twice (\`memory\`'s target, \`vision_analyze\`'s image).

Targets: ≤ 12 KB for a first turn, ≥ 95 % stable prefix. For comparison, the issue reports OpenClaw at
59 KB per turn with 11 tools. Lazy tools send the eager toolsets' schemas (\`tools.eager\`: core, memory,
skills) and \`load_tools\`, and list the other toolsets by name and tool names in the system prompt; a
loaded toolset's schemas are appended after them for the rest of the session. A smaller request makes
the same new messages a larger share of it, so the prefix share is lower than with every schema while
the bytes not shared are the same: only the new messages, and once, when a toolset loads, everything
after the tools (the system prompt and the history so far). The gateway's CPU per turn does not move
beyond this shared machine's noise (rounds, lazy: ${on?.cpuRoundsMs.join(", ")} ms; before: ${off?.cpuRoundsMs.join(", ")} ms): each
schema's JSON is made once and reused, and a turn's tool layout and system prompt are memoised, so what
the schemas cost is the model's prompt processing (about a quarter of the bytes in tokens), paid by
every request that carries them.`;
}
