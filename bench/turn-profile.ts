/**
 * Where a plain turn's CPU goes: `herald gateway` as in the floor scenario (Telegram only; from dist/
 * module by module, so frames name Herald's files), under `--cpu-prof`, through the floor scenario's load (200 chats × 5 messages at once after 10 to warm up);
 * the profile's top frames by self time (waiting left out), per message, for this build and, with
 * `HERALD_BENCH_BEFORE`, for another build in the same run.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { type FloorTarget, start, stop } from "./floor.js";
import { machineLine, round } from "./lib.js";

export interface TurnProfileOptions {
  root: string;
  chats: number;
  perChat: number;
  before?: string | undefined;
}

/** Per build: CPU ms per message in the profile, and the top frames (µs of self time per message). */
export type TurnProfileResult = Record<string, { cpuMsPerMessage: number; frames: [string, number][] }>;

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

let nextChat = 9_000_000;

async function load(telegram: FakeTelegram, chats: number, perChat: number): Promise<void> {
  const roundTrip = async (chatId: number, text: string) => {
    const before = telegram.botMessages(chatId).length;
    telegram.userSends({ chatId, text, fromId: chatId });
    await telegram.waitFor(() => telegram.botMessages(chatId).length > before, 120_000);
  };
  await Promise.all(
    Array.from({ length: chats }, () => nextChat++).map(async (chatId) => {
      for (let m = 0; m < perChat; m++) await roundTrip(chatId, `load ${m}`);
    }),
  );
}

async function profileTarget(
  options: TurnProfileOptions,
  target: FloorTarget,
  fakes: Parameters<typeof start>[2],
): Promise<TurnProfileResult[string]> {
  const dir = mkdtempSync(join(tmpdir(), "herald-turn-profile-"));
  const running = await start(options, target, fakes, {
    nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
    // Module by module, so frames name Herald's files (the bundle npm start runs is the same code).
    ...(target.startsWith("before") ? {} : { entry: join(options.root, "dist/app/cli.js") }),
  });
  let stopped = false;
  try {
    await new Promise((r) => setTimeout(r, 3_000));
    await load(fakes.telegram, 10, 1);
    // The profile covers the whole process: its start and warm-up are profiled separately below.
    const profileStart = Number(process.hrtime.bigint() / 1000n);
    await load(fakes.telegram, options.chats, options.perChat);
    const profileEnd = Number(process.hrtime.bigint() / 1000n);
    await stop(running);
    stopped = true;
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))!;
    const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile & { startTime: number };
    // HERALD_BENCH_KEEP_PROFILE=<dir>: the raw profile kept there too, for a closer look (DevTools).
    const keep = process.env["HERALD_BENCH_KEEP_PROFILE"];
    if (keep) {
      copyFileSync(join(dir, file), join(keep, `turn-${target}.cpuprofile`));
      writeFileSync(join(keep, `turn-${target}.window.json`), JSON.stringify({ profileStart, profileEnd }));
    }
    const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    const frames = new Map<string, number>();
    let at = profile.startTime;
    let busyUs = 0;
    profile.samples.forEach((id, i) => {
      at += profile.timeDeltas[i] ?? 0;
      if (at < profileStart || at > profileEnd) return;
      const frame = byId.get(id)!;
      if (frame.functionName === "(idle)") return;
      const us = profile.timeDeltas[i] ?? 0;
      busyUs += us;
      const where = frame.url.replace(/^.*\/(node_modules|dist)\//, "");
      const key = `${frame.functionName || "(top level)"}${where ? ` ${where}:${frame.lineNumber + 1}` : ""}`;
      frames.set(key, (frames.get(key) ?? 0) + us);
    });
    const messages = options.chats * options.perChat;
    return {
      cpuMsPerMessage: round(busyUs / 1000 / messages, 2),
      frames: [...frames]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15)
        .map(([k, us]) => [k, round(us / messages, 0)]),
    };
  } finally {
    if (!stopped) await stop(running);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchTurnProfile(options: TurnProfileOptions): Promise<TurnProfileResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "hello" }));
  const telegram = await startFakeTelegram();
  const result: TurnProfileResult = {};
  try {
    if (options.before) result["before"] = await profileTarget(options, "before", { telegram, llm });
    result["after"] = await profileTarget(options, "herald", { telegram, llm });
  } finally {
    await telegram.close();
    await llm.close();
  }
  return result;
}

export function turnProfileMarkdown(
  result: TurnProfileResult,
  options: TurnProfileOptions,
  command: string,
): string {
  const builds = Object.keys(result);
  const table = (build: string) =>
    `| µs / message | frame (${build}) |\n|---|---|\n${result[build]!.frames.map(([f, us]) => `| ${us} | \`${f}\` |`).join("\n")}`;
  return `## A plain turn's CPU: the profile of the floor's load

Command: \`${command}\` — ${machineLine()}. \`herald gateway\` with only Telegram configured, as in the
floor scenario, under \`--cpu-prof\`; ${options.chats} chats × ${options.perChat} messages at once after 10 to
warm up; the samples of the load alone, waiting left out, by frame (self time), per message. The
gateway process only (the fakes run in the benchmark's process).${options.before ? " Before: the previous main's build (`HERALD_BENCH_BEFORE`), in the same run." : ""}

CPU per message in the profile: ${builds.map((b) => `${b} ${result[b]!.cpuMsPerMessage} ms`).join(", ")}.

${builds.map(table).join("\n\n")}`;
}
