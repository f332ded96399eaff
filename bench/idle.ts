/**
 * What an idle gateway keeps resident: each target of the floor scenario (`floor.ts`) started with a
 * probe (`memory-probe.ts`) that, 3 s after start, records the process's memory as V8 sees it; beside
 * it, the RSS of every process of the tree (the sandbox's ready shell, MCP servers) from /proc. The
 * configured target is measured at its second start, with the MCP servers' tool lists cached (floor's
 * `start`): servers configured but unused do not run.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { type FloorTarget, start, stop } from "./floor.js";
import { machineLine, median, round } from "./lib.js";

export interface IdleOptions {
  root: string;
  runs: number;
  before?: string | undefined;
}

/** One target's idle memory, MiB. */
export interface IdleFigures {
  rss: number;
  heapUsed: number;
  /** V8's heap reserved beyond what is used. */
  heapSlack: number;
  /** Compiled code and bytecode (V8's code space; bytecode sits in old space too). */
  codeSpace: number;
  external: number;
  /** RSS neither V8's heap nor external: Node and V8 themselves, native libraries and their caches. */
  native: number;
  /** Child processes by what they run, MiB. */
  children: Record<string, number>;
  /** The whole process tree: the gateway and every descendant, MiB. */
  treeRss: number;
  /** Processes in the tree. */
  processes: number;
}

const mib = (bytes: number) => bytes / 2 ** 20;

/** The direct and indirect children of `pid` with their RSS (MiB) and command line. */
function childrenOf(pid: number): { cmd: string; rssMb: number }[] {
  const rows: { pid: number; ppid: number; cmd: string; rssMb: number }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]!.split(" ");
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      rows.push({ pid: Number(name), ppid: Number(stat[1]), cmd, rssMb: mib(Number(stat[21]) * 4096) });
    } catch {
      // Gone meanwhile.
    }
  }
  const members = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows)
      if (!members.has(row.pid) && members.has(row.ppid)) {
        members.add(row.pid);
        grew = true;
      }
  }
  return rows.filter((r) => r.pid !== pid && members.has(r.pid));
}

/** A child's label: an MCP server, the sandbox's shell, or its program's name. */
function labelOf(cmd: string): string {
  if (cmd.includes("server-everything") || cmd.includes("mcp")) return "MCP server (node, each)";
  if (cmd.includes("herald-sandbox") || cmd.startsWith("/bin/sh")) return "sandbox's ready shell";
  return cmd.split(" ")[0]!.split("/").pop()!;
}

async function probe(
  options: IdleOptions,
  target: FloorTarget,
  fakes: Parameters<typeof start>[2],
): Promise<IdleFigures> {
  const file = join(tmpdir(), `herald-idle-${process.pid}-${target}.json`);
  rmSync(file, { force: true });
  const running = await start(options, target, fakes, {
    nodeFlags: ["--import", join(options.root, "dist/bench/memory-probe.js")],
    env: { HERALD_MEMORY_PROBE: file, HERALD_MEMORY_PROBE_MS: "3000" },
  });
  try {
    await new Promise((r) => setTimeout(r, 3_500));
    const pid = running.child.pid!;
    const { usage, spaces } = JSON.parse(readFileSync(file, "utf8")) as {
      usage: NodeJS.MemoryUsage;
      spaces: Record<string, number>;
    };
    const rss = mib(Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[21]) * 4096);
    const children: Record<string, number> = {};
    const counts: Record<string, number> = {};
    const descendants = childrenOf(pid);
    for (const child of descendants) {
      const label = labelOf(child.cmd);
      children[label] = (children[label] ?? 0) + child.rssMb;
      counts[label] = (counts[label] ?? 0) + 1;
    }
    for (const label of Object.keys(children)) children[label] = round(children[label]! / counts[label]!, 1);
    return {
      rss: round(rss, 1),
      heapUsed: round(mib(usage.heapUsed), 1),
      heapSlack: round(mib(usage.heapTotal - usage.heapUsed), 1),
      codeSpace: round(mib(spaces["code_space"] ?? 0), 1),
      external: round(mib(usage.external), 1),
      native: round(rss - mib(usage.heapTotal + usage.external), 1),
      children,
      treeRss: round(rss + descendants.reduce((sum, c) => sum + c.rssMb, 0), 1),
      processes: 1 + descendants.length,
    };
  } finally {
    await stop(running);
    rmSync(file, { force: true });
  }
}

export async function benchIdle(options: IdleOptions): Promise<Partial<Record<FloorTarget, IdleFigures>>> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "hello" }));
  const telegram = await startFakeTelegram();
  const targets: FloorTarget[] = ["reference", "herald", "configured"];
  if (options.before) targets.push("before", "beforeConfigured");
  const runs = new Map<FloorTarget, IdleFigures[]>(targets.map((t) => [t, []]));
  try {
    for (let r = 0; r < options.runs; r++)
      for (const target of targets) runs.get(target)!.push(await probe(options, target, { telegram, llm }));
  } finally {
    await telegram.close();
    await llm.close();
  }
  const result: Partial<Record<FloorTarget, IdleFigures>> = {};
  for (const [target, list] of runs) {
    const pick = (f: (x: IdleFigures) => number) => round(median(list.map(f)), 1);
    const labels = new Set(list.flatMap((x) => Object.keys(x.children)));
    result[target] = {
      rss: pick((x) => x.rss),
      heapUsed: pick((x) => x.heapUsed),
      heapSlack: pick((x) => x.heapSlack),
      codeSpace: pick((x) => x.codeSpace),
      external: pick((x) => x.external),
      native: pick((x) => x.native),
      children: Object.fromEntries([...labels].map((l) => [l, pick((x) => x.children[l] ?? 0)])),
      treeRss: pick((x) => x.treeRss),
      processes: pick((x) => x.processes),
    };
  }
  return result;
}

const LABELS: Partial<Record<FloorTarget, string>> = {
  reference: "reference",
  herald: "Telegram only",
  configured: "configured but unused",
  before: "before: Telegram only",
  beforeConfigured: "before: configured",
};

export function idleMarkdown(
  result: Partial<Record<FloorTarget, IdleFigures>>,
  options: IdleOptions,
  command: string,
): string {
  const targets = Object.keys(result) as FloorTarget[];
  const row = (label: string, value: (f: IdleFigures) => number | undefined) =>
    `| ${label} | ${targets.map((t) => `${value(result[t]!) ?? "—"}`).join(" | ")} |`;
  const labels = new Set(targets.flatMap((t) => Object.keys(result[t]!.children)));
  return `## Idle memory: what stays resident

Command: \`${command}\` — ${machineLine()}. The floor scenario's targets (\`npm start\`'s flags, Telegram on
the fake Bot API), each started with \`bench/memory-probe.ts\`, which records \`process.memoryUsage()\`
and V8's heap spaces 3 s after start; the RSS of every process of the tree from /proc. ${options.runs} runs,
medians, MiB. "Configured": its second start, the five MCP servers' tool lists cached by the first.${options.before ? ' "Before": the previous main\'s build (`HERALD_BENCH_BEFORE`).' : ""}

| part (MiB) | ${targets.map((t) => LABELS[t]).join(" | ")} |
|---|${targets.map(() => "---|").join("")}
${row("process tree RSS", (f) => f.treeRss)}
${row("processes in the tree", (f) => f.processes)}
${row("gateway process RSS", (f) => f.rss)}
${row("· V8 heap in use (objects, bytecode)", (f) => f.heapUsed)}
${row("· V8 heap reserved, not in use", (f) => f.heapSlack)}
${row("· of which V8 code space", (f) => f.codeSpace)}
${row("· external (buffers, SQLite statements …)", (f) => f.external)}
${row("· native: Node, V8, ICU, shared libraries", (f) => f.native)}
${[...labels].map((l) => row(`child: ${l}`, (f) => f.children[l])).join("\n")}`;
}
