/**
 * The terminal tool's cost, per execution backend, through the whole gateway (its own process, as
 * `npm start` runs it): a turn whose model asks for `terminal {command: "true"}` and then answers, minus
 * the same turn with no tool call; and the reply latency of other chats while 20 sessions run commands.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createExecutionBackend, runCommand, SandboxBackend } from "../agent/exec/index.js";
import type { FakeLlmRequest } from "../tests/fakes/llm/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, percentile, postTurn, round, spawnGateway, startFlags } from "./lib.js";

export interface ToolsBenchOptions {
  root: string;
  backends: ("local" | "sandbox")[];
  /** Turns per series. */
  turns: number;
  /** Sessions running a command at once in the load phase. */
  busySessions: number;
}

export interface ToolsBenchResult {
  backend: string;
  plainP50Ms: number;
  plainP99Ms: number;
  toolP50Ms: number;
  toolP99Ms: number;
  overheadP50Ms: number;
  overheadP99Ms: number;
  /** `true` through the backend directly (no gateway, no model): the process floor. */
  directP50Ms: number;
  idleOtherP50Ms: number;
  busyOtherP50Ms: number;
  busyOtherP99Ms: number;
}

const TOOL_MARK = "run-true";
/** The bare spawn floor of the last run, for the text. */
let spawnFloorMs = 0;
const BUSY_MARK = "run-busy";

/** The fake model: a marked message asks for a command, its tool result gets a short answer. */
function model(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: "done" };
  const text = typeof last?.content === "string" ? last.content : "";
  if (text.startsWith(TOOL_MARK))
    return { toolCalls: [{ name: "terminal", arguments: { command: "true" } }] };
  if (text.startsWith(BUSY_MARK))
    return { toolCalls: [{ name: "terminal", arguments: { command: "sleep 1; seq 1 20000 | tail -1" } }] };
  return { text: "ok" };
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** p50 of a bare `sh -c true` spawned from Node, and of `true` through each backend directly. */
async function floors(
  backends: readonly ("local" | "sandbox")[],
  count: number,
): Promise<{ spawnP50Ms: number; direct: Map<string, number> }> {
  const bare: number[] = [];
  for (let i = 0; i < count; i++)
    bare.push(
      await timed(
        () => new Promise<void>((resolve) => spawn("/bin/sh", ["-c", "true"]).once("exit", () => resolve())),
      ),
    );
  const direct = new Map<string, number>();
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-ws-"));
  for (const name of backends) {
    const backend = createExecutionBackend({ backend: name });
    const ws = { key: "bench", dir };
    await backend.prepare(ws);
    const times: number[] = [];
    for (let i = 0; i < count; i++)
      times.push(await timed(async () => void (await runCommand(backend, ws, { command: "true" }))));
    direct.set(name, round(percentile(times, 50)));
    await backend.close();
  }
  return { spawnP50Ms: round(percentile(bare, 50)), direct };
}

export async function benchTools(options: ToolsBenchOptions): Promise<ToolsBenchResult[]> {
  const floor = await floors(options.backends, 50);
  spawnFloorMs = floor.spawnP50Ms;
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(model);
  const results: ToolsBenchResult[] = [];
  try {
    for (const backend of options.backends) {
      const gw = await spawnGateway(
        {
          OPENAI_BASE_URL: llm.url,
          OPENAI_API_KEY: "bench",
          HERALD_MODEL: "fake-model",
          HERALD_EXEC_BACKEND: backend,
          HERALD_CONCURRENCY: String(options.busySessions + 4),
        },
        options.root,
        startFlags(options.root),
      );
      try {
        for (let i = 0; i < 10; i++) await postTurn(gw.url, `${TOOL_MARK} warm ${i}`, `warm-${i}`);
        const plain: number[] = [];
        const tool: number[] = [];
        // Interleaved, so the machine's noise weighs on both series alike.
        for (let i = 0; i < options.turns; i++) {
          plain.push(await timed(() => postTurn(gw.url, `plain ${i}`, `plain-${i % 20}`)));
          tool.push(await timed(() => postTurn(gw.url, `${TOOL_MARK} ${i}`, `tool-${i % 20}`)));
        }
        const idleOther: number[] = [];
        for (let i = 0; i < 50; i++)
          idleOther.push(await timed(() => postTurn(gw.url, `other ${i}`, `other-${i}`)));
        const busyOther: number[] = [];
        const busy = Array.from({ length: options.busySessions }, (_, i) =>
          (async () => {
            for (let round = 0; round < 3; round++)
              await postTurn(gw.url, `${BUSY_MARK} ${round}`, `busy-${i}`);
          })(),
        );
        const others = (async () => {
          for (let i = 0; i < 50; i++)
            busyOther.push(await timed(() => postTurn(gw.url, `other ${i}`, `busy-other-${i}`)));
        })();
        await Promise.all([...busy, others]);
        const p = (values: number[], q: number) => round(percentile(values, q));
        results.push({
          backend,
          plainP50Ms: p(plain, 50),
          plainP99Ms: p(plain, 99),
          toolP50Ms: p(tool, 50),
          toolP99Ms: p(tool, 99),
          overheadP50Ms: round(percentile(tool, 50) - percentile(plain, 50)),
          overheadP99Ms: round(percentile(tool, 99) - percentile(plain, 99)),
          directP50Ms: floor.direct.get(backend) ?? 0,
          idleOtherP50Ms: p(idleOther, 50),
          busyOtherP50Ms: p(busyOther, 50),
          busyOtherP99Ms: p(busyOther, 99),
        });
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await llm.close();
  }
  return results;
}

export function toolsMarkdown(
  results: ToolsBenchResult[],
  options: ToolsBenchOptions,
  command: string,
): string {
  const rows = results.map(
    (r) =>
      `| ${r.backend} | ${r.plainP50Ms} / ${r.plainP99Ms} ms | ${r.toolP50Ms} / ${r.toolP99Ms} ms | **${r.overheadP50Ms}** / ${r.overheadP99Ms} ms | ${r.directP50Ms} ms | **${round(r.overheadP50Ms - r.directP50Ms)} ms** | ${r.idleOtherP50Ms} ms | ${r.busyOtherP50Ms} / ${r.busyOtherP99Ms} ms (${round(r.busyOtherP50Ms / r.idleOtherP50Ms)}× p50) |`,
  );
  const floor = results.find((r) => r.backend === "local");
  const sandbox = results.find((r) => r.backend === "sandbox");
  const gap = floor && sandbox ? round(sandbox.overheadP50Ms - floor.overheadP50Ms) : undefined;
  return `## Terminal tool, per execution backend

Command: \`${command}\` — ${machineLine()}. The gateway runs as its own process with npm start's flags; the
fake model asks for \`terminal {command: "true"}\` and then answers. ${options.turns} turns with the tool and
${options.turns} without, interleaved. Then 50 turns of other chats alone, and 50 while ${options.busySessions} sessions
each run three commands of about a second.

| backend | turn without a tool p50 / p99 | turn with \`true\` p50 / p99 | tool call overhead p50 / p99 | \`true\` through the backend alone p50 | overhead beyond that (model round trip + loop) p50 | other chats, idle p50 | other chats while ${options.busySessions} sessions run commands p50 / p99 |
|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Targets: \`local\` ≤ 5 ms p50, \`sandbox\` ≤ 15 ms p50 over \`local\`${gap === undefined ? "" : ` (here ${gap} ms)`}; other chats within 2× of idle.
Starting any process is the floor: on this host, in this run, a bare \`sh -c true\` spawned from Node takes
${spawnFloorMs} ms (p50), so most of \`local\`'s overhead is the host's process start; the sandbox adds its
namespace set-up (bubblewrap) on top. The tool call also costs a second model round trip (the answer
after the tool result), which the column "beyond that" includes.
${processLimitLine()}`;
}

/** How the sandbox bounded processes in this run (it differs for a root gateway). */
function processLimitLine(): string {
  const uid = process.getuid?.();
  const { cgroupDir, runsAs } = new SandboxBackend().processLimit();
  const who = uid === 0 ? "root" : `uid ${uid}`;
  const as = runsAs
    ? ` Sandboxed commands ran as uid ${runsAs.uid} outside (setpriv, then a user namespace of their own).`
    : "";
  if (cgroupDir)
    return `The gateway ran as ${who}; each sandboxed command ran in a pids cgroup of its own (under ${cgroupDir}), entered by a shell made ready ahead of the command, and under RLIMIT_NPROC.${as}`;
  return `The gateway ran as ${who}; the sandbox's process limit was RLIMIT_NPROC alone.${as}`;
}
