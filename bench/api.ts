/**
 * API-server scenario: the gateway as a child process (`herald gateway`, embedded queue) with the fake
 * model answering at once. Measures cold start, per-turn latency against the raw model round trip (the
 * floor), throughput over many concurrent sessions, and the gateway's peak RSS. Several variants (Node
 * flags) run side by side, their rounds interleaved, so a noisy machine weighs on each alike.
 */
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import {
  cpuSeconds,
  type GatewayProcess,
  machineLine,
  measureFloor,
  median,
  percentile,
  postTurn,
  round,
  spawnGateway,
} from "./lib.js";

export interface ApiBenchOptions {
  root: string;
  sessions: number;
  turnsPerSession: number;
  sequentialTurns: number;
  /** Load rounds per variant (the median is reported). @defaultValue 3 */
  rounds?: number;
  /**
   * Node flags of each variant's gateway (none: V8's defaults), and the CLI it runs (another build of
   * Herald, to measure a change before and after in one run). @defaultValue `<root>/dist/app/cli.js`
   */
  variants: { name: string; nodeFlags?: string[] | undefined; entry?: string | undefined }[];
}

export interface ApiBenchResult {
  name: string;
  coldStartMs: number;
  floorP50Ms: number;
  floorP99Ms: number;
  turnP50Ms: number;
  turnP99Ms: number;
  overheadP50Ms: number;
  overheadP99Ms: number;
  /** Median of the rounds. */
  turnsPerSecond: number;
  /** Each round's turns/s, ascending. */
  turnsPerSecondRange: number[];
  loadP50Ms: number;
  loadP99Ms: number;
  peakRssMb: number;
  /** CPU milliseconds per turn under load: the gateway process, and the bench process (clients + fake model). */
  gatewayCpuMsPerTurn: number;
  /** Of the gateway's: its main thread (JavaScript; the rest is GC and I/O helper threads). */
  mainThreadCpuMsPerTurn: number;
  benchCpuMsPerTurn: number;
  sessions: number;
  turns: number;
}

interface Variant {
  name: string;
  gw: GatewayProcess;
  sequential: number[];
  load: number[];
  rounds: { turnsPerSecond: number; gatewayCpuMs: number; mainThreadCpuMs: number; benchCpuMs: number }[];
}

export async function benchApi(options: ApiBenchOptions): Promise<ApiBenchResult[]> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "ok" }));
  const variants: Variant[] = [];
  try {
    // The floor: the same streaming call the agent makes, straight to the fake model.
    const floor = await measureFloor(llm.url, options.sequentialTurns);
    const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "bench", HERALD_MODEL: "fake-model" };
    for (const { name, nodeFlags, entry } of options.variants) {
      const gw = await spawnGateway(env, options.root, nodeFlags, entry);
      variants.push({ name, gw, sequential: [], load: [], rounds: [] });
      for (let i = 0; i < 50; i++) await postTurn(gw.url, `warm ${i}`, "warmup");
    }
    // Sequential turns (latency with nothing else running), in blocks taken by the variants in turn.
    const block = Math.max(1, Math.ceil(options.sequentialTurns / 5));
    for (let done = 0; done < options.sequentialTurns; done += block) {
      for (const v of variants) {
        for (let i = done; i < Math.min(done + block, options.sequentialTurns); i++) {
          const t0 = performance.now();
          await postTurn(v.gw.url, `turn ${i}`, `seq-${i % 10}`);
          v.sequential.push(performance.now() - t0);
        }
      }
    }
    // Load: many sessions at once, each sending its turns one after another; the variants take rounds
    // in alternating order.
    const turns = options.sessions * options.turnsPerSession;
    const passes = options.rounds ?? 3;
    for (let pass = 0; pass < passes; pass++) {
      const order = pass % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const pid = v.gw.child.pid!;
        const gatewayCpu0 = cpuSeconds(pid);
        const mainCpu0 = cpuSeconds(pid, pid);
        const benchCpu0 = process.cpuUsage();
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: options.sessions }, async (_, s) => {
            for (let i = 0; i < options.turnsPerSession; i++) {
              const start = performance.now();
              await postTurn(v.gw.url, `load ${pass}.${i}`, `load-${pass}-${s}`);
              v.load.push(performance.now() - start);
            }
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const benchCpu = process.cpuUsage(benchCpu0);
        v.rounds.push({
          turnsPerSecond: turns / seconds,
          gatewayCpuMs: (cpuSeconds(pid) - gatewayCpu0) * 1000,
          mainThreadCpuMs: (cpuSeconds(pid, pid) - mainCpu0) * 1000,
          benchCpuMs: (benchCpu.user + benchCpu.system) / 1000,
        });
      }
    }
    return variants.map((v) => {
      const mid = [...v.rounds].sort((a, b) => a.turnsPerSecond - b.turnsPerSecond)[
        Math.floor(v.rounds.length / 2)
      ]!;
      return {
        name: v.name,
        coldStartMs: round(v.gw.coldStartMs, 0),
        floorP50Ms: round(median(floor)),
        floorP99Ms: round(percentile(floor, 99)),
        turnP50Ms: round(median(v.sequential)),
        turnP99Ms: round(percentile(v.sequential, 99)),
        overheadP50Ms: round(median(v.sequential) - median(floor)),
        overheadP99Ms: round(percentile(v.sequential, 99) - percentile(floor, 99)),
        turnsPerSecond: round(mid.turnsPerSecond, 0),
        turnsPerSecondRange: v.rounds.map((r) => round(r.turnsPerSecond, 0)).sort((a, b) => a - b),
        loadP50Ms: round(median(v.load)),
        loadP99Ms: round(percentile(v.load, 99)),
        peakRssMb: round(v.gw.peakRssMb(), 1),
        gatewayCpuMsPerTurn: round(mid.gatewayCpuMs / turns),
        mainThreadCpuMsPerTurn: round(mid.mainThreadCpuMs / turns),
        benchCpuMsPerTurn: round(mid.benchCpuMs / turns),
        sessions: options.sessions,
        turns,
      };
    });
  } finally {
    for (const v of variants) await v.gw.stop();
    await llm.close();
  }
}

export function apiMarkdown(
  r: ApiBenchResult,
  v8: ApiBenchResult,
  command: string,
  flags: string[],
  before?: ApiBenchResult,
): string {
  const columns = [r, v8, ...(before ? [before] : [])];
  const row = (label: string, cell: (x: ApiBenchResult, i: number) => string, target = "") =>
    `| ${label} | ${columns.map(cell).join(" | ")} | ${target} |`;
  const bold = (text: string, i: number) => (i === 0 ? `**${text}**` : text);
  const beforeText = before
    ? " A third column runs the build before the change being measured (`HERALD_BENCH_BEFORE`), with npm start's flags, in the same rounds."
    : "";
  return `## API server, embedded queue

Command: \`${command}\` — ${machineLine()}. The gateway runs as its own process, as \`npm start\` runs it
(\`node ${flags.join(" ")}\`); beside it the same gateway with V8's default heap sizing. The bench
process runs the HTTP clients and the fake model, which answers at once. The gateways take their
load rounds in alternating order, so the machine's noise weighs on all.${beforeText}

| figure | npm start | V8 defaults | ${before ? "before (npm start) | " : ""}target |
|---|---|---|${before ? "---|" : ""}---|
${[
  row("cold start to ready (spawn → /health answers)", (x) => `${x.coldStartMs} ms`, "≤ 1,000 ms"),
  row(
    "raw fake-model round trip, streaming (the floor) p50 / p99",
    (x) => `${x.floorP50Ms} / ${x.floorP99Ms} ms`,
  ),
  row("turn through the gateway, one at a time, p50 / p99", (x) => `${x.turnP50Ms} / ${x.turnP99Ms} ms`),
  row(
    "**gateway overhead per turn** p50 / p99 (turn − floor)",
    (x, i) => bold(`${x.overheadP50Ms} / ${x.overheadP99Ms} ms`, i),
    "≤ 5 / ≤ 25 ms",
  ),
  row(
    `**throughput**, ${r.sessions} sessions at once, ${r.turns} turns a round, median of ${r.turnsPerSecondRange.length} rounds (range)`,
    (x, i) => `${bold(`${x.turnsPerSecond} turns/s`, i)} (${x.turnsPerSecondRange.join("–")})`,
    "≥ 1,000",
  ),
  row("turn latency under that load p50 / p99", (x) => `${x.loadP50Ms} / ${x.loadP99Ms} ms`),
  row("**gateway peak RSS** (VmHWM)", (x, i) => bold(`${x.peakRssMb} MB`, i), "≤ 150 MB"),
  row(
    "CPU per turn under load: gateway (its main thread) / bench process (clients + fake model)",
    (x) => `${x.gatewayCpuMsPerTurn} (${x.mainThreadCpuMsPerTurn}) / ${x.benchCpuMsPerTurn} ms`,
  ),
].join("\n")}

Overhead is the difference of the percentiles of the two sequential series; every turn is a real one:
ledger, session, journal, queue, agent loop, streaming model call, outbox, delivery, all in SQLite (WAL).

Throughput is CPU-bound: the gateway's JavaScript runs on one thread, and the load generator and fake
model share the same 2 cores. At ${r.mainThreadCpuMsPerTurn} ms of main-thread CPU per turn one gateway
caps near ${Math.round(1000 / r.mainThreadCpuMsPerTurn)} turns/s, and the two processes together need
${round(r.gatewayCpuMsPerTurn + r.benchCpuMsPerTurn)} ms of CPU per turn, so the two cores cap near
${Math.round(2000 / (r.gatewayCpuMsPerTurn + r.benchCpuMsPerTurn))} turns/s on this machine, whatever the gateway does. With V8's defaults
the heap takes room it does not need: a young generation of up to 3 × 16 MB, and an old generation let
grow to several times what is live (~20 MB after a full collection). \`npm start\`'s flags cap the young
generation's semi-spaces at 4 MB and let the old one grow to 1.5 × what was live before it is collected
again; neither is a limit, so a long context still fits. Their cost here: ${round(100 * (r.mainThreadCpuMsPerTurn / v8.mainThreadCpuMsPerTurn - 1), 0)} % main-thread CPU per turn.`;
}
