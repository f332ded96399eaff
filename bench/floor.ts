/**
 * The floor scenario: what a plain "hi" costs. `herald gateway` as `npm start` runs it (its script and
 * Node flags, a Telegram token) against the fake Bot API and an instant fake model, beside the reference
 * gateway (`reference-gateway.ts`: fetch-only long polling) under the same fakes in the same run, so
 * every figure is also a ratio to the floor measured minutes apart on the same machine.
 *
 * Three targets, each its own process per run: the reference, Herald with only Telegram configured,
 * and Herald with everything configured but unused (every toolset, five MCP servers, two plugins). The
 * configured one is measured at its second start on its HERALD_HOME: a first start (not measured) lists
 * the MCP servers' tools into state.db, as any gateway's first start does. Per
 * run and target: spawn → first `getUpdates`; idle RSS of the process tree after the start settled;
 * latency of single messages (one in flight, spread over chats so Telegram's per-chat limit never
 * waits); then 200 chats × 5 messages at once: CPU per message of the process tree and its peak RSS.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import Database from "better-sqlite3";
import { type FakeLlm, startFakeLlm } from "../tests/fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { EVERYTHING_ENTRY } from "../tests/helpers/mcp-servers.js";
import { machineLine, median, percentile, round, startEntry, startFlags } from "./lib.js";

/** The processes measured ("before*": another build's `cli.js`, `FloorOptions.before`). */
export type FloorTarget = "reference" | "herald" | "configured" | "before" | "beforeConfigured";
export const FLOOR_TARGETS: readonly FloorTarget[] = [
  "reference",
  "herald",
  "configured",
  "before",
  "beforeConfigured",
];

export interface FloorOptions {
  root: string;
  runs: number;
  /** Single messages timed per run (one in flight). */
  singles: number;
  /** Chats and messages per chat of the load phase. */
  chats: number;
  perChat: number;
  /**
   * Spawns per target and run timed to its first `getUpdates` besides the measured one (each stopped at
   * once): one start is too noisy a figure on a shared host. @defaultValue 0
   */
  starts?: number | undefined;
  /** The script another build's `npm start` runs (`HERALD_BENCH_BEFORE`): measured as "before" in the same runs. */
  before?: string | undefined;
}

/** The targets of a run with `options`: the "before" ones only with a build to compare. */
export const targetsOf = (options: FloorOptions): FloorTarget[] =>
  FLOOR_TARGETS.filter((t) => options.before || !t.startsWith("before"));

/** Whether `target` runs with everything configured. */
const isConfigured = (target: FloorTarget) => target === "configured" || target === "beforeConfigured";

/** One target's figures of one run. */
export interface FloorFigures {
  coldStartMs: number;
  idleRssMb: number;
  idleProcesses: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerMessage: number;
  peakRssMb: number;
}

export type FloorResult = Partial<Record<FloorTarget, FloorFigures>> &
  Record<"reference" | "herald" | "configured", FloorFigures>;

const TOOLSETS = "core,cron,memory,skills,terminal,files,web,voice,vision,messaging,delegate,tasks";

/** pid → [ppid, rss bytes, cpu seconds] of every process now. */
function processTable(): Map<number, { ppid: number; rss: number; cpu: number }> {
  const table = new Map<number, { ppid: number; rss: number; cpu: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]!.split(" ");
      table.set(Number(name), {
        ppid: Number(fields[1]),
        rss: Number(fields[21]) * 4096,
        // utime + stime + the children it waited for.
        cpu: (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100,
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return table;
}

/** RSS (MiB), CPU seconds and process count of `pid` and all its descendants. */
function tree(pid: number): { rssMb: number; cpu: number; count: number } {
  const table = processTable();
  const members = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, row] of table)
      if (!members.has(p) && members.has(row.ppid)) {
        members.add(p);
        grew = true;
      }
  }
  let rss = 0;
  let cpu = 0;
  for (const p of members) {
    rss += table.get(p)?.rss ?? 0;
    cpu += table.get(p)?.cpu ?? 0;
  }
  return { rssMb: rss / 2 ** 20, cpu, count: [...members].filter((p) => table.has(p)).length };
}

/** A HERALD_HOME for `target`: the configured one has five MCP servers and two plugins. */
/** The checkout whose `npm start` flags a target runs with: a "before" build's own, where it has them. */
function rootOf(options: Pick<FloorOptions, "root" | "before">, target: FloorTarget): string {
  if (!target.startsWith("before") || !options.before) return options.root;
  const root = resolve(dirname(options.before), "../..");
  return existsSync(join(root, "package.json")) ? root : options.root;
}

export function homeFor(root: string, target: FloorTarget): string {
  const home = mkdtempSync(join(tmpdir(), `herald-floor-${target}-`));
  if (!isConfigured(target)) return home;
  const node = JSON.stringify(process.execPath);
  const servers = [1, 2, 3, 4, 5]
    .map(
      (n) =>
        `  everything${n}:\n    command: ${node}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
    )
    .join("");
  writeFileSync(join(home, "config.yaml"), `mcp_servers:\n${servers}`);
  mkdirSync(join(home, "plugins"));
  cpSync(join(root, "examples/plugins/notes"), join(home, "plugins/notes"), { recursive: true });
  // A second plugin: the sample under other names.
  const second = join(home, "plugins/jots");
  cpSync(join(root, "examples/plugins/notes"), second, { recursive: true });
  const manifest = join(second, "plugin.json");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace('"name": "notes"', '"name": "jots"'));
  const main = join(second, "index.js");
  writeFileSync(
    main,
    readFileSync(main, "utf8").replaceAll("note_add", "jot_add").replace("notes: {", "jots: {"),
  );
  return home;
}

export interface Running {
  child: ChildProcess;
  home: string;
  coldStartMs: number;
}

/** The environment `target` runs with: Telegram on the fake, the instant model, no API server. */
export function envFor(
  target: FloorTarget,
  home: string,
  telegram: FakeTelegram,
  llm: FakeLlm,
): Record<string, string> {
  return {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HERALD_HOME: home,
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.url,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "bench",
    HERALD_MODEL: "fake-model",
    GATEWAY_ALLOW_ALL_USERS: "true",
    API_SERVER_ENABLED: "false",
    HERALD_LOG_LEVEL: "warn",
    ...(isConfigured(target)
      ? {
          HERALD_TOOLSETS: TOOLSETS,
          HERALD_WEB_SEARCH_PROVIDER: "searxng",
          HERALD_WEB_SEARCH_URL: "http://127.0.0.1:9/search",
          HERALD_TTS_URL: "http://127.0.0.1:9/v1",
          HERALD_TTS_MODEL: "tts-1",
          HERALD_TTS_VOICE: "alloy",
          HERALD_VISION_URL: "http://127.0.0.1:9/v1",
          HERALD_VISION_MODEL: "vision-model",
        }
      : {}),
  };
}

/**
 * Spawns `target` (with `extra.nodeFlags` before the entry, `extra.env` added; Herald's targets run
 * `npm start`'s script, or `extra.entry`) and resolves at its first `getUpdates`.
 */
export async function start(
  options: Pick<FloorOptions, "root" | "before">,
  target: FloorTarget,
  fakes: { telegram: FakeTelegram; llm: FakeLlm },
  extra: { nodeFlags?: readonly string[]; env?: Record<string, string>; entry?: string } = {},
): Promise<Running> {
  const { telegram, llm } = fakes;
  const nodeFlags = extra.nodeFlags ?? [];
  const home = homeFor(options.root, target);
  const env = { ...envFor(target, home, telegram, llm), ...extra.env };
  const cli =
    extra.entry ??
    (target.startsWith("before") && options.before ? options.before : startEntry(options.root));
  if (isConfigured(target))
    await warmToolCache(options.root, cli, envFor(target, home, telegram, llm), telegram);
  const args =
    target === "reference"
      ? [...nodeFlags, join(options.root, "dist/bench/reference-gateway.js")]
      : [...startFlags(rootOf(options, target)), ...nodeFlags, cli, "gateway"];
  const polls = telegram.callsTo("getUpdates").length;
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "inherit"] });
  await telegram.waitFor(() => telegram.callsTo("getUpdates").length > polls, 60_000);
  return { child, home, coldStartMs: performance.now() - t0 };
}

/** MCP tool lists cached in `home`'s state.db; -1 without the table (a build before the cache). */
function cachedLists(home: string): number {
  try {
    const db = new Database(join(home, "state.db"), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM mcp_tool_cache").get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return -1;
  }
}

/**
 * A first start of a configured target on `env`'s HERALD_HOME, stopped once its five MCP servers'
 * tool lists are in state.db (a build without the cache: 10 s after its first poll).
 */
async function warmToolCache(
  root: string,
  cli: string,
  env: Record<string, string>,
  telegram: FakeTelegram,
): Promise<void> {
  const polls = telegram.callsTo("getUpdates").length;
  const child = spawn(process.execPath, [...startFlags(root), cli, "gateway"], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  await telegram.waitFor(() => telegram.callsTo("getUpdates").length > polls, 60_000);
  const until = Date.now() + 60_000;
  let counted = 0;
  for (let waited = 0; Date.now() < until; waited += 250) {
    counted = cachedLists(env["HERALD_HOME"]!);
    if (counted >= 5 || (counted < 0 && waited >= 10_000)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGTERM");
  if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
}

export async function stop(running: Running): Promise<void> {
  if (running.child.exitCode === null) {
    running.child.kill("SIGTERM");
    await new Promise((r) => running.child.once("exit", r));
  }
  rmSync(running.home, { recursive: true, force: true });
}

let nextChat = 1_000_000;

/** Sends one message and resolves with the milliseconds until the bot's reply reached the fake. */
export async function roundTrip(telegram: FakeTelegram, chatId: number, text: string): Promise<number> {
  const before = telegram.botMessages(chatId).length;
  const t0 = performance.now();
  telegram.userSends({ chatId, text, fromId: chatId });
  await telegram.waitFor(() => telegram.botMessages(chatId).length > before, 60_000);
  return performance.now() - t0;
}

async function measure(
  options: FloorOptions,
  target: FloorTarget,
  telegram: FakeTelegram,
  llm: FakeLlm,
): Promise<FloorFigures> {
  const starts: number[] = [];
  for (let i = 0; i < (options.starts ?? 0); i++) {
    const once = await start(options, target, { telegram, llm });
    starts.push(once.coldStartMs);
    await stop(once);
  }
  const running = await start(options, target, { telegram, llm });
  starts.push(running.coldStartMs);
  try {
    const pid = running.child.pid!;
    // Settle: whatever starts in the background after the first poll has 3 s to do it.
    await new Promise((r) => setTimeout(r, 3_000));
    const idle = tree(pid);
    // Single messages, one in flight, a chat each at most every few seconds (the per-chat limit).
    const chats = Array.from({ length: 40 }, () => nextChat++);
    for (let i = 0; i < 10; i++) await roundTrip(telegram, chats[i % chats.length]!, `warm ${i}`);
    const singles: number[] = [];
    for (let i = 0; i < options.singles; i++) {
      singles.push(await roundTrip(telegram, chats[i % chats.length]!, `hi ${i}`));
      await new Promise((r) => setTimeout(r, 100));
    }
    // Load: every chat sends its messages one after another, all chats at once.
    const cpuBefore = tree(pid).cpu;
    let peak = tree(pid).rssMb;
    const sampler = setInterval(() => {
      peak = Math.max(peak, tree(pid).rssMb);
    }, 50);
    const loadChats = Array.from({ length: options.chats }, () => nextChat++);
    await Promise.all(
      loadChats.map(async (chatId) => {
        for (let m = 0; m < options.perChat; m++) await roundTrip(telegram, chatId, `load ${m}`);
      }),
    );
    clearInterval(sampler);
    const messages = options.chats * options.perChat;
    return {
      coldStartMs: round(median(starts), 0),
      idleRssMb: round(idle.rssMb, 1),
      idleProcesses: idle.count,
      p50Ms: round(median(singles), 2),
      p99Ms: round(percentile(singles, 99), 2),
      cpuMsPerMessage: round(((tree(pid).cpu - cpuBefore) * 1000) / messages, 2),
      peakRssMb: round(peak, 1),
    };
  } finally {
    await stop(running);
  }
}

/** Runs every target `runs` times, interleaved, and returns the median of each figure. */
export async function benchFloor(
  options: FloorOptions,
): Promise<{ result: FloorResult; runs: FloorResult[] }> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "hello" }));
  const telegram = await startFakeTelegram();
  const runs: FloorResult[] = [];
  try {
    for (let r = 0; r < options.runs; r++) {
      const run = {} as FloorResult;
      for (const target of targetsOf(options)) run[target] = await measure(options, target, telegram, llm);
      runs.push(run);
      console.error(`floor run ${r + 1}/${options.runs}: ${JSON.stringify(run)}`);
    }
  } finally {
    await telegram.close();
    await llm.close();
  }
  const result = {} as FloorResult;
  for (const target of targetsOf(options)) {
    const figures = {} as FloorFigures;
    for (const key of Object.keys(runs[0]![target]!) as (keyof FloorFigures)[])
      figures[key] = median(runs.map((run) => run[target]![key]));
    result[target] = figures;
  }
  return { result, runs };
}

const RATIO_KEYS = ["coldStart", "p50", "idleRss", "cpuPerMessage"] as const;

/** `target`'s figures as ratios to the reference's of the same runs (lower is better). */
function ratiosOf(result: FloorResult, target: FloorTarget): Record<(typeof RATIO_KEYS)[number], number> {
  const ref = result.reference;
  const f = result[target]!;
  return {
    coldStart: round(f.coldStartMs / ref.coldStartMs, 2),
    p50: round(f.p50Ms / ref.p50Ms, 2),
    idleRss: round(f.idleRssMb / ref.idleRssMb, 2),
    cpuPerMessage: round(f.cpuMsPerMessage / ref.cpuMsPerMessage, 2),
  };
}

/** The ratios to the reference that `--check` guards (this build's targets; lower is better). */
export function floorRatios(result: FloorResult): Record<string, number> {
  const ratios: Record<string, number> = {};
  for (const target of ["herald", "configured"] as const)
    for (const [key, value] of Object.entries(ratiosOf(result, target))) ratios[`${target}.${key}`] = value;
  return ratios;
}

/**
 * Compares `ratios` with the committed ones: a ratio more than `tolerance` above its committed value is
 * a regression. Returns one line per regression (empty: none).
 */
export function floorRegressions(
  ratios: Record<string, number>,
  committed: Record<string, number>,
  tolerance = 0.25,
): string[] {
  return Object.entries(committed).flatMap(([name, was]) => {
    const now = ratios[name];
    if (now === undefined || now <= was * (1 + tolerance)) return [];
    return [`${name}: ${now}× the reference, committed ${was}× (more than ${tolerance * 100} % worse)`];
  });
}

const LABELS: Record<FloorTarget, string> = {
  reference: "reference gateway",
  herald: "Herald, Telegram only",
  configured: "Herald, configured but unused",
  before: "before, Telegram only",
  beforeConfigured: "before, configured but unused",
};

/** The BENCHMARKS.md section, with the ratios as a JSON block `--check` reads back. */
export function floorMarkdown(result: FloorResult, options: FloorOptions, command: string): string {
  const ratios = floorRatios(result);
  const targets = targetsOf(options);
  const row = (label: string, value: (f: FloorFigures) => string) =>
    `| ${label} | ${targets.map((t) => value(result[t]!)).join(" | ")} |`;
  const x = (target: FloorTarget) =>
    target === "reference"
      ? "1×"
      : Object.values(ratiosOf(result, target))
          .map((r) => `${r}×`)
          .join(" / ");
  const before = options.before
    ? ` "Before": the build of the previous main (\`HERALD_BENCH_BEFORE=<the script its npm start runs>\`), in the same runs.`
    : "";
  return `## The floor: a plain message, against a fetch-only reference gateway

Command: \`${command}\` — ${machineLine()}. Each target is its own process, started as \`npm start\`
starts Herald (its script and Node flags) with a Telegram token, against the fake Bot API and an instant
fake model; the reference gateway (\`bench/reference-gateway.ts\`) long-polls with plain \`fetch\`.
${options.runs} runs, targets interleaved, medians${options.starts ? ` (spawn → first poll: of ${options.starts + 1} starts per target and run)` : ""}. "Configured but unused": every toolset, five MCP
servers (server-everything over stdio) and two plugins, and only plain messages sent; measured at its
second start (a first one, not measured, cached the servers' tool lists in state.db). Single messages:
${options.singles} with one in flight (spread over 40 chats, 100 ms apart); load: ${options.chats} chats ×
${options.perChat} messages at once (Telegram's send limits apply to Herald, as in production).${before}

| figure | ${targets.map((t) => LABELS[t]).join(" | ")} |
|---|${targets.map(() => "---|").join("")}
${row("spawn → first getUpdates", (f) => `${f.coldStartMs} ms`)}
${row("idle RSS, process tree", (f) => `${f.idleRssMb} MiB (${f.idleProcesses} proc.)`)}
${row("single message p50 / p99", (f) => `${f.p50Ms} / ${f.p99Ms} ms`)}
${row("CPU per message under load", (f) => `${f.cpuMsPerMessage} ms`)}
${row(`peak RSS, ${options.chats} chats × ${options.perChat}`, (f) => `${f.peakRssMb} MiB`)}
| ratio to the reference: start / p50 / idle RSS / CPU | ${targets.map(x).join(" | ")} |

\`npm run bench -- floor --check\` runs this again and fails when a ratio is more than 25 % above these:

\`\`\`json floor-ratios
${JSON.stringify(ratios)}
\`\`\``;
}

/** The ratios committed in BENCHMARKS.md, or undefined when the section has none. */
export function committedRatios(benchmarks: string): Record<string, number> | undefined {
  const m = /```json floor-ratios\n(.*)\n```/.exec(benchmarks);
  return m ? (JSON.parse(m[1]!) as Record<string, number>) : undefined;
}
