/**
 * What start loads: `herald gateway` from dist/ module by module (`dist/app/cli.js`; the bundle `npm
 * start` runs is the same modules in chunks, its start is the floor's) with npm start's flags (Telegram
 * on the fake Bot API), spawned with a module hook that logs every module loaded (`import-log.ts`) and
 * `--cpu-prof`, stopped at its first `getUpdates`. Per group (an npm package, or a folder of Herald's own), the modules loaded before the
 * first poll and the CPU the profile puts in its code (self time), for this build and, with
 * `HERALD_BENCH_BEFORE`, for another build in the same runs; and each package's import cost alone (a
 * fresh `node` importing only it). Plus the profile's top frames.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { type FloorTarget, start, stop } from "./floor.js";
import { machineLine, median, round } from "./lib.js";

export interface ImportsOptions {
  root: string;
  runs: number;
  /** Another build's `dist/app/cli.js`, measured in the same runs. */
  before?: string | undefined;
}

/** One build's start, one run. */
interface StartProfile {
  coldStartMs: number;
  /** Group → modules loaded before the first poll. */
  modules: Map<string, number>;
  /** Group → self CPU ms in the profile, spawn → first poll. */
  cpuMs: Map<string, number>;
  /** "function file:line" → self CPU ms. */
  frames: Map<string, number>;
}

export interface ImportsResult {
  builds: Record<string, { coldStartMs: number; modules: number; groups: Record<string, [number, number]> }>;
  /** Package → ms to import it alone. */
  alone: Record<string, number>;
  /** The top frames of this build's profile (median run), self ms. */
  frames: [string, number][];
}

/** The group of a module or profile URL: its npm package, Herald's folder, or Node's internals. */
export function groupOf(url: string): string {
  if (!url) return "(V8: GC, compiler, idle)";
  if (url.startsWith("node:")) return "node: internals (module loader …)";
  const pkg = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/((?:[^/]+\/)?[^/]+)\//.exec(url) ?? /\/dist\/([^/]+)/.exec(url);
  return own ? `herald ${own[1]!.replace(/\.js$/, "")}` : url;
}

const add = (map: Map<string, number>, key: string, value: number) =>
  map.set(key, (map.get(key) ?? 0) + value);

interface CpuProfile {
  startTime: number;
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** The profile's samples up to `untilUs` (the monotonic clock the profiler and `process.hrtime` share). */
function readProfile(dir: string, untilUs: number): Pick<StartProfile, "cpuMs" | "frames"> {
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  const profile = JSON.parse(readFileSync(join(dir, file!), "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const cpuMs = new Map<string, number>();
  const frames = new Map<string, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at > untilUs) return;
    const frame = byId.get(id)!;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    // Waiting is not a cost of start.
    if (frame.functionName === "(idle)") return;
    const special = ["(garbage collector)", "(program)"].includes(frame.functionName);
    add(cpuMs, frame.url ? groupOf(frame.url) : special ? frame.functionName : "(native: fs, compile …)", ms);
    const where = frame.url.replace(/^.*\/(node_modules|dist)\//, "").replace(/^file:\/\//, "");
    add(
      frames,
      `${frame.functionName || "(top level)"} ${where}${where ? `:${frame.lineNumber + 1}` : ""}`,
      ms,
    );
  });
  return { cpuMs, frames };
}

/**
 * Two starts of `target`: one with the module hook (which runs on a thread of its own and would
 * distort a profile) for the modules loaded, one with `--cpu-prof` alone for the time and CPU.
 */
async function profileStart(
  options: ImportsOptions,
  target: FloorTarget,
  fakes: Parameters<typeof start>[2],
): Promise<StartProfile> {
  const dir = mkdtempSync(join(tmpdir(), "herald-imports-"));
  const log = join(dir, "modules.log");
  // Module by module: the bundle npm start runs has chunks, not the modules this groups by folder.
  const entry = target.startsWith("before") ? undefined : join(options.root, "dist/app/cli.js");
  const logged = await start(options, target, fakes, {
    nodeFlags: ["--import", join(options.root, "dist/bench/import-log.js")],
    env: { HERALD_IMPORT_LOG: log },
    ...(entry ? { entry } : {}),
  });
  const polledAt = Date.now();
  await stop(logged);
  const modules = new Map<string, number>();
  for (const line of readFileSync(log, "utf8").trim().split("\n")) {
    const [at, url] = line.split(" ");
    if (Number(at) <= polledAt && url && !url.includes("/bench/import-log")) add(modules, groupOf(url), 1);
  }
  const profiled = await start(options, target, fakes, {
    nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
    ...(entry ? { entry } : {}),
  });
  const polledAtUs = Number(process.hrtime.bigint() / 1000n);
  // The signal handlers are set once the start resolved: a SIGTERM before would end it unprofiled.
  await new Promise((r) => setTimeout(r, 2_000));
  await stop(profiled);
  const profile = readProfile(dir, polledAtUs);
  rmSync(dir, { recursive: true, force: true });
  return { coldStartMs: profiled.coldStartMs, modules, ...profile };
}

/** Milliseconds a fresh `node` takes to import `pkg` alone (median of 5), from `root`. */
function importAlone(root: string, pkg: string): number {
  const code = `const t0 = performance.now(); await import(${JSON.stringify(pkg)}); console.log(performance.now() - t0);`;
  const times = Array.from({ length: 5 }, () =>
    Number(
      execFileSync(process.execPath, ["--input-type=module", "-e", code], {
        cwd: root,
        stdio: ["ignore", "pipe", "ignore"],
      }).toString(),
    ),
  );
  return round(median(times), 1);
}

const medianMap = (maps: Map<string, number>[]) => {
  const keys = new Set(maps.flatMap((m) => [...m.keys()]));
  return new Map([...keys].map((k) => [k, median(maps.map((m) => m.get(k) ?? 0))]));
};

export async function benchImports(options: ImportsOptions): Promise<ImportsResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "hello" }));
  const telegram = await startFakeTelegram();
  const builds: [string, FloorTarget][] = [["after", "herald"]];
  if (options.before) builds.push(["before", "before"]);
  const profiles = new Map<string, StartProfile[]>(builds.map(([name]) => [name, []]));
  try {
    for (let r = 0; r < options.runs; r++)
      for (const [name, target] of builds)
        profiles.get(name)!.push(await profileStart(options, target, { telegram, llm }));
  } finally {
    await telegram.close();
    await llm.close();
  }
  const result: ImportsResult = { builds: {}, alone: {}, frames: [] };
  for (const [name, runs] of profiles) {
    const modules = medianMap(runs.map((r) => r.modules));
    const cpu = medianMap(runs.map((r) => r.cpuMs));
    const groups: Record<string, [number, number]> = {};
    for (const key of new Set([...modules.keys(), ...cpu.keys()]))
      groups[key] = [modules.get(key) ?? 0, round(cpu.get(key) ?? 0, 1)];
    result.builds[name] = {
      coldStartMs: round(median(runs.map((r) => r.coldStartMs)), 0),
      modules: [...modules.values()].reduce((a, b) => a + b, 0),
      groups,
    };
    if (name === "after") {
      const frames = medianMap(runs.map((r) => r.frames));
      result.frames = [...frames]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15)
        .map(([k, v]) => [k, round(v, 1)]);
    }
  }
  const packages = new Set(
    Object.values(result.builds).flatMap((b) =>
      Object.keys(b.groups).filter(
        (g) => !g.startsWith("herald ") && !g.startsWith("node:") && !g.startsWith("("),
      ),
    ),
  );
  for (const pkg of packages) {
    try {
      result.alone[pkg] = importAlone(options.root, pkg);
    } catch {
      // Not importable by its bare name (no "." export): left out of that column.
    }
  }
  return result;
}

export function importsMarkdown(result: ImportsResult, options: ImportsOptions, command: string): string {
  const after = result.builds["after"]!;
  const before = result.builds["before"];
  const rows = Object.entries({ ...before?.groups, ...after.groups })
    .map(([group]) => {
      const a = after.groups[group] ?? [0, 0];
      const b = before?.groups[group] ?? [0, 0];
      return { group, a, b, weight: Math.max(a[1], b[1]) + Math.max(a[0], b[0]) / 10 };
    })
    .sort((x, y) => y.weight - x.weight)
    .slice(0, 30);
  const cell = (b: number, a: number) => (before ? `${b} → ${a}` : `${a}`);
  const table = rows
    .map(
      ({ group, a, b }) =>
        `| ${group} | ${cell(b[0], a[0])} | ${cell(b[1], a[1])} | ${result.alone[group] ?? ""} |`,
    )
    .join("\n");
  const frames = result.frames.map(([frame, ms]) => `| ${ms} | \`${frame}\` |`).join("\n");
  return `## Start: what loads before the first poll, and what it costs

Command: \`${command}\` — ${machineLine()}. \`herald gateway\` from dist/ module by module (the
bundle npm start runs is the same modules in chunks), with npm start's flags and only Telegram configured, spawned with a module hook that logs each module loaded (\`bench/import-log.ts\`) and
\`--cpu-prof\`, stopped at its first \`getUpdates\`; ${options.runs} runs, medians.${before ? ` Before → after: the previous main's build (\`HERALD_BENCH_BEFORE\`) and this one, in the same runs.` : ""}
Modules: ESM modules and CommonJS entry points loaded before the first poll (a CommonJS package's
inner \`require\`s are not counted). CPU: self time the profile puts in the group's code from spawn to the
first poll (the module loader's own work is Node's internals). Alone: a fresh \`node\`
importing only that package (its dependencies included), median of 5.

Spawn → first \`getUpdates\` in these runs (with the profiler): ${before ? `${before.coldStartMs} ms → ` : ""}${after.coldStartMs} ms; modules loaded: ${before ? `${before.modules} → ` : ""}${after.modules}.

| group | modules | CPU self ms | alone ms |
|---|---|---|---|
${table}

Top frames by self time (this build):

| self ms | frame |
|---|---|
${frames}`;
}
