/**
 * What the model is sent: request bytes per turn with every default toolset on, and how much of each
 * request repeats the previous one of its session byte for byte (what a provider's prompt cache can
 * reuse). The gateway runs in-process against the fake model, which keeps every body; the same bodies
 * are also laid out as before tools moved ahead of the messages, for comparison.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { silentLogger } from "../core/logger.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, round } from "./lib.js";

export interface RequestsBenchOptions {
  /** Turns of the one session measured. */
  turns: number;
}

export interface RequestsBenchResult {
  toolsets: string[];
  tools: number;
  firstTurnBytes: number;
  toolSchemaBytes: number;
  systemPromptBytes: number;
  /** Per consecutive pair of requests of the session: shared prefix bytes / the later request's bytes. */
  stableShareMin: number;
  stableShareMedian: number;
  /** The same with the messages ahead of the tools (the layout before). */
  beforeShareMedian: number;
  /** Cached prompt tokens the (simulated, 64-token-block) prefix cache reported / all prompt tokens. */
  cachedShare: number;
  lastTurnBytes: number;
}

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** A body as it was laid out before: model, messages, then tools. */
function oldLayout(body: string): string {
  const { model, messages, tools, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify({ model, messages, ...(tools ? { tools } : {}), ...rest });
}

export async function benchRequests(options: RequestsBenchOptions): Promise<RequestsBenchResult> {
  const llm = await startFakeLlm();
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-requests-"));
  const config = loadConfig({
    env: {
      HERALD_HOME: homeDir,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      API_SERVER_PORT: "0",
      HERALD_LOG_LEVEL: "silent",
      HERALD_LEARNING_ENABLED: "false",
    },
  });
  const gateway = await startGateway(config, { logger: silentLogger() });
  try {
    const url = `${gateway.http?.url}/v1/chat/completions`;
    let sessionId: string | undefined;
    for (let i = 0; i < options.turns; i++) {
      // Every third turn calls a tool: the turn's second request repeats its first one too.
      if (i % 3 === 2) {
        llm.script(
          { toolCalls: [{ name: "session_search", arguments: { query: `topic ${i}` } }] },
          { text: `Nothing earlier about topic ${i}; here is what I know now.` },
        );
      } else {
        llm.script({ text: `Answer ${i}: a paragraph of a usual length for a chat reply. `.repeat(4) });
      }
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(sessionId ? { "x-herald-session-id": sessionId } : {}),
        },
        body: JSON.stringify({
          model: "herald",
          messages: [{ role: "user", content: `Question ${i}: what next?` }],
        }),
      });
      if (res.status !== 200) throw new Error(`turn ${i} answered ${res.status}`);
      sessionId ??= res.headers.get("x-herald-session-id") ?? undefined;
      await res.text();
    }
    const bodies = llm.bodies;
    const first = JSON.parse(bodies[0]!) as {
      tools?: unknown[];
      messages: { role: string; content: string }[];
    };
    const shares: number[] = [];
    const before: number[] = [];
    for (let i = 1; i < bodies.length; i++) {
      shares.push(commonPrefix(bodies[i - 1]!, bodies[i]!) / bodies[i]!.length);
      const a = oldLayout(bodies[i - 1]!);
      const b = oldLayout(bodies[i]!);
      before.push(commonPrefix(a, b) / b.length);
    }
    const median = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] ?? 0;
    const prompt = llm.usages.reduce((n, u) => n + u.prompt_tokens, 0);
    const cached = llm.usages.reduce((n, u) => n + (u.prompt_tokens_details?.cached_tokens ?? 0), 0);
    return {
      toolsets: config.agent.toolsets,
      tools: first.tools?.length ?? 0,
      firstTurnBytes: Buffer.byteLength(bodies[0]!),
      toolSchemaBytes: Buffer.byteLength(JSON.stringify(first.tools ?? [])),
      systemPromptBytes: Buffer.byteLength(first.messages.find((m) => m.role === "system")?.content ?? ""),
      stableShareMin: round(Math.min(...shares) * 100, 1),
      stableShareMedian: round(median(shares) * 100, 1),
      beforeShareMedian: round(median(before) * 100, 1),
      cachedShare: round((cached / prompt) * 100, 1),
      lastTurnBytes: Buffer.byteLength(bodies.at(-1)!),
    };
  } finally {
    await gateway.stop();
    await llm.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

export function requestsMarkdown(
  r: RequestsBenchResult,
  options: RequestsBenchOptions,
  command: string,
): string {
  const kb = (n: number) => `${round(n / 1024, 1)} KB`;
  return `## Model requests: size and stable prefix

Command: \`${command}\` — ${machineLine()}. One API session of ${options.turns} turns (every third with a
tool call) through the in-process gateway, default toolsets (${r.toolsets.join(", ")}; ${r.tools} tool
schemas in the first request: with lazy tools, the eager toolsets' and \`load_tools\`), the fake model keeping every request body.

| figure | value | target |
|---|---|---|
| request bytes, first turn, empty history | ${kb(r.firstTurnBytes)} (tool schemas ${kb(r.toolSchemaBytes)}, system prompt ${kb(r.systemPromptBytes)}) | ≤ 12 KB |
| request bytes, turn ${options.turns} | ${kb(r.lastTurnBytes)} | |
| **stable prefix**: bytes each request shares with the previous one of its session, median (min) | **${r.stableShareMedian} %** (${r.stableShareMin} %) | ≥ 95 % |
| the same bytes with the messages ahead of the tools (the layout before; providers that render tools first themselves saw more) | ${r.beforeShareMedian} % | |
| prompt tokens a prefix cache of 64-token blocks serves (the fake's simulation) | ${r.cachedShare} % | |

The prefix stays byte-stable because the system prompt is built once per session (its date line states
the session's start), the tool schemas are the same objects in the same order, sent ahead of the
messages, and earlier messages are sent unchanged: each request only appends.`;
}
