/**
 * Commands scenario: how fast the gateway answers slash commands, through the API server of a whole
 * in-process gateway (state, runner, queue, the fake model), with a state file holding many other
 * sessions (so `/sessions` reads a realistic table). Latency runs from the request to the full answer.
 * Measured twice: with the session idle, and while a slow turn of the same session is running (the
 * commands must not wait for it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { silentLogger } from "../core/logger.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, median, percentile, round } from "./lib.js";

export interface CommandsBenchOptions {
  /** Other sessions in the state file (4 messages each). */
  otherSessions: number;
  /** Times each command is run per phase. */
  iterations: number;
}

export interface CommandLatency {
  command: string;
  phase: "idle" | "turn running";
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const COMMANDS = ["/whoami", "/help", "/sessions", "/title Benchmark", "/personality", "/undo"];

/** Runs the scenario and returns each command's latency in both phases. */
export async function benchCommands(opts: CommandsBenchOptions): Promise<CommandLatency[]> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "ok" }));
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-cmd-"));
  const config = loadConfig({
    env: {
      HERALD_HOME: homeDir,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      API_SERVER_PORT: "0",
    },
  });
  const gateway = await startGateway(config, { logger: silentLogger() });
  try {
    const { state } = gateway;
    for (let i = 0; i < opts.otherSessions; i++) {
      const chat = { platform: "telegram", chatId: String(10_000 + i) };
      const { session } = state.sessions.open(
        { chat, chatType: "dm", userId: chat.chatId },
        { mode: "none", idleMinutes: 1440, atHour: 4 },
      );
      state.sessions.append(session.id, [
        { role: "user", content: `question ${i}` },
        { role: "assistant", content: "answer" },
        { role: "user", content: "thanks" },
        { role: "assistant", content: "welcome" },
      ]);
    }
    const url = `${gateway.http!.url}/v1/chat/completions`;
    let sessionId: string | undefined;
    const post = async (text: string): Promise<string> => {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(sessionId ? { "x-herald-session-id": sessionId } : {}),
        },
        body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] }),
      });
      sessionId ??= res.headers.get("x-herald-session-id") ?? undefined;
      const body = (await res.json()) as { choices?: { message: { content: string } }[] };
      return body.choices?.[0]?.message.content ?? "";
    };
    // This chat: three earlier sessions of ten turns, and a current one.
    for (let s = 0; s < 4; s++) {
      for (let t = 0; t < 10; t++) await post(`turn ${t} of session ${s}`);
      if (s < 3) await post("/new");
    }

    const results: CommandLatency[] = [];
    const measure = async (phase: CommandLatency["phase"]) => {
      for (const command of COMMANDS) {
        const times: number[] = [];
        for (let i = 0; i < opts.iterations; i++) {
          const started = performance.now();
          await post(command);
          times.push(performance.now() - started);
          // Put back what /undo removed (not timed; while a turn runs /undo refuses and removes nothing).
          if (command === "/undo" && phase === "idle") await post("again");
        }
        results.push({
          command: command.split(" ")[0]!,
          phase,
          p50Ms: round(median(times)),
          p99Ms: round(percentile(times, 99)),
          maxMs: round(Math.max(...times)),
        });
      }
    };
    await measure("idle");
    // A turn that takes the model 60 s: the commands are measured while it runs.
    llm.script({ text: "slow", delayMs: 60_000 });
    const slow = post("a long question");
    await llm.waitForRequests(1);
    await measure("turn running");
    await post("/stop");
    await slow;
    return results;
  } finally {
    await gateway.stop();
    await llm.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

/** The BENCHMARKS.md section. */
export function commandsMarkdown(
  results: CommandLatency[],
  opts: CommandsBenchOptions,
  command: string,
): string {
  const rows = results.map((r) => `| \`${r.command}\` | ${r.phase} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} |`);
  return [
    "## Slash commands through the API server",
    "",
    `\`${command}\`; ${machineLine()}. The whole gateway in-process, a state file with ${opts.otherSessions} other`,
    `sessions, this chat with 4 sessions of 10 turns; each command ${opts.iterations} times, request to full answer,`,
    "once with the session idle and once while a turn of the same session is running (the model holds it",
    "for 60 s). Target: every command under 100 ms, and no waiting for the running turn. On a machine",
    "shared with other work the p99 and max columns carry its noise; p50 is the command's own cost.",
    "",
    "| command | session | p50 ms | p99 ms | max ms |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}
