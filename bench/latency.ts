/**
 * Where a single message's time goes: the floor scenario's single messages (one in flight, an instant
 * model), with each HTTP call of the message timed inside the gateway (`latency-hooks.ts`, preloaded:
 * when each request went out and when its answer was read, counted from the moment the long poll's
 * answer carrying the message was read), for the reference gateway and Herald in the same runs. It
 * shows what Herald adds to the floor's path and where: the typing indicator's call before the model's,
 * the inbound record's commit, the turn's set-up, the reply's commit.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { type FloorOptions, roundTrip, start, stop } from "./floor.js";
import { machineLine, median, round } from "./lib.js";

export interface LatencyOptions extends Pick<FloorOptions, "root"> {
  runs: number;
  /** Single messages timed per run and target (after 10 to warm up). */
  messages: number;
}

type Target = "reference" | "herald";
const TARGETS: readonly Target[] = ["reference", "herald"];

/** The moments of a message, as "sent:<call>" / "read:<call>" (see latency-hooks.ts). */
const PHASES = [
  ["sent:sendChatAction", "typing indicator sent"],
  ["sent:model", "model request sent"],
  ["read:model", "model answer read"],
  ["sent:getUpdates", "next long poll sent"],
  ["sent:sendMessage", "reply sent"],
] as const;

/** Per target: the median round trip (user sends → reply at the fake) and the median of each phase. */
export type LatencyResult = Record<Target, { roundTripMs: number; phases: Record<string, number> }>;

const WARM = 10;

/** Each message's phases (ms after its poll answer was read), from one process's events. */
function phasesOf(events: [number, string][]): Record<string, number>[] {
  const messages: Record<string, number>[] = [];
  let current: { at: number; seen: Record<string, number> } | undefined;
  const close = () => {
    if (current && "sent:model" in current.seen) messages.push(current.seen);
  };
  for (const [at, label] of events.sort((a, b) => a[0] - b[0])) {
    if (label === "read:getUpdates") {
      close();
      current = { at, seen: {} };
    } else if (current && !(label in current.seen)) current.seen[label] = at - current.at;
  }
  close();
  return messages.slice(WARM);
}

export async function benchLatency(options: LatencyOptions): Promise<LatencyResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "hello" }));
  const telegram = await startFakeTelegram();
  const hooks = join(options.root, "dist/bench/latency-hooks.js");
  const dir = mkdtempSync(join(tmpdir(), "herald-latency-"));
  const trips: Record<Target, number[]> = { reference: [], herald: [] };
  const phases: Record<Target, Record<string, number>[]> = { reference: [], herald: [] };
  // As the floor scenario: 40 chats in turn, each at most every few seconds (the per-chat limit).
  const chats = Array.from({ length: 40 }, (_, i) => 5_000_000 + i);
  try {
    for (let r = 0; r < options.runs; r++) {
      for (const target of TARGETS) {
        const out = join(dir, `${target}-${r}.json`);
        const running = await start(
          options,
          target,
          { telegram, llm },
          {
            nodeFlags: ["--import", hooks],
            env: { HERALD_LATENCY_OUT: out },
          },
        );
        try {
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          for (let i = 0; i < WARM + options.messages; i++) {
            const ms = await roundTrip(telegram, chats[i % chats.length]!, `hi ${i}`);
            if (i >= WARM) trips[target].push(ms);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        } finally {
          await stop(running);
        }
        phases[target].push(...phasesOf(JSON.parse(readFileSync(out, "utf8")) as [number, string][]));
      }
    }
  } finally {
    await telegram.close();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const result = {} as LatencyResult;
  for (const target of TARGETS) {
    const figures: Record<string, number> = {};
    for (const [label] of PHASES) {
      const values = phases[target].flatMap((m) => (m[label] === undefined ? [] : [m[label]!]));
      if (values.length > phases[target].length / 2) figures[label] = round(median(values), 2);
    }
    result[target] = { roundTripMs: round(median(trips[target]), 2), phases: figures };
  }
  return result;
}

export function latencyMarkdown(result: LatencyResult, options: LatencyOptions, command: string): string {
  const cell = (target: Target, label: string) => {
    const v = result[target].phases[label];
    return v === undefined ? "—" : `${v}`;
  };
  const rows = PHASES.map(
    ([label, name]) => `| ${name} | ${cell("reference", label)} | ${cell("herald", label)} |`,
  );
  return `## Where a single message's time goes

Command: \`${command}\` — ${machineLine()}. The floor scenario's single messages (${options.messages} per run after
${WARM} to warm up, one in flight, 40 chats in turn, an instant model), ${options.runs} runs, each gateway with
\`--import dist/bench/latency-hooks.js\`: when each HTTP call of a message went out (flushed to its socket)
and when its answer was read, in ms after the long poll's answer carrying the message was read (medians;
"—": the call is not made). A call's "sent" includes the moment the fake on the other end of loopback
takes to be scheduled: on 2 cores each request hands the CPU to the fake for a while.

| ms after the update was read | reference | Herald |
|---|---|---|
${rows.join("\n")}
| round trip: user sends → reply at the fake | ${result.reference.roundTripMs} | ${result.herald.roundTripMs} |`;
}
