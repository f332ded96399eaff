/**
 * Hand-over scenario: what handing workspaces over through the gateway adds to a turn on Redis, with
 * 1, 2 and 4 `herald worker` processes (each its own HERALD_HOME, `--concurrency 1`), against the same
 * run with `HERALD_EXEC_WORKSPACE_HANDOVER=false` (each worker keeps its own workspaces: before the
 * hand-over existed). Every process is a real one from dist/ on a private redis-server; commands run
 * with `exec.backend: local`. Each session first writes 100 files of 1 KiB; then turns go one at a time,
 * round robin over the sessions, so a session's next turn lands on whichever worker is free: a tool
 * turn appends a line to a file (one changed file to push, and a pull where the turn changed worker),
 * a chat turn calls no tool (only the generation check). The fake model answers at once, and tells by
 * the model name which worker asked, so the share of turns that changed worker is counted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlmRequest, startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, median, percentile, postTurn, round, spawnGateway } from "./lib.js";
import { startRedisServer } from "./redis.js";

export interface HandoverBenchOptions {
  root: string;
  workerCounts: number[];
  sessions: number;
  /** Tool turns and as many chat turns per session. */
  turnsPerSession: number;
}

export interface HandoverModeResult {
  workers: number;
  handover: boolean;
  toolP50Ms: number;
  toolP99Ms: number;
  chatP50Ms: number;
  chatP99Ms: number;
  /** Share of tool turns that ran on another worker than the session's previous turn. */
  movedShare: number;
}

export interface HandoverBenchResult {
  modes: HandoverModeResult[];
}

const SETUP = "mkdir -p src && for i in $(seq 1 100); do head -c 1024 /dev/urandom > src/f$i; done";

function lastUser(request: FakeLlmRequest): string {
  const users = request.messages.filter((m) => m.role === "user");
  return String(users[users.length - 1]?.content ?? "");
}

export async function benchHandover(options: HandoverBenchOptions): Promise<HandoverBenchResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  const ranOn = new Map<string, string>();
  llm.setDefault((request) => {
    const text = lastUser(request);
    const session = text.split(" ")[1] ?? "";
    if (request.messages[request.messages.length - 1]?.role !== "user") return { text: "done" };
    if (text.startsWith("setup")) return { toolCalls: [{ name: "terminal", arguments: { command: SETUP } }] };
    if (!text.startsWith("edit")) return { text: "ok" };
    const moved = ranOn.has(session) && ranOn.get(session) !== request.model;
    ranOn.set(session, request.model);
    if (moved) ranOn.set(`${session}:moved`, String(Number(ranOn.get(`${session}:moved`) ?? 0) + 1));
    return { toolCalls: [{ name: "terminal", arguments: { command: `echo ${text} >> log.txt` } }] };
  });
  const redis = await startRedisServer();
  try {
    const modes: HandoverModeResult[] = [];
    for (const workers of options.workerCounts)
      for (const handover of [false, true]) {
        ranOn.clear();
        modes.push(await runMode(options, workers, handover, llm.url, redis.url, ranOn));
      }
    return { modes };
  } finally {
    await redis.stop();
    await llm.close();
  }
}

async function runMode(
  options: HandoverBenchOptions,
  workerCount: number,
  handover: boolean,
  llmUrl: string,
  redisUrl: string,
  ranOn: Map<string, string>,
): Promise<HandoverModeResult> {
  const key = randomBytes(16).toString("hex");
  const env = {
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "bench",
    HERALD_MODEL: "fake-model",
    REDIS_URL: redisUrl,
    HERALD_QUEUE_PREFIX: `bench${randomBytes(4).toString("hex")}`,
    HERALD_GATEWAY_KEY: key,
    HERALD_LEARNING_ENABLED: "false",
    HERALD_EXEC_BACKEND: "local",
    HERALD_EXEC_WORKSPACE_HANDOVER: String(handover),
  };
  const gw = await spawnGateway(env, options.root);
  const workers: { child: ChildProcess; home: string }[] = [];
  try {
    for (let i = 0; i < workerCount; i++) {
      const home = mkdtempSync(join(tmpdir(), "herald-bench-worker-"));
      const child = spawn(
        process.execPath,
        [join(options.root, "dist/app/cli.js"), "worker", "--concurrency", "1"],
        {
          env: {
            ...process.env,
            ...env,
            HERALD_MODEL: `w${i + 1}`,
            HERALD_HOME: home,
            HERALD_GATEWAY_URL: gw.url,
            HERALD_LOG_LEVEL: "warn",
          },
          stdio: ["ignore", "ignore", "inherit"],
        },
      );
      workers.push({ child, home });
    }
    for (;;) {
      const health = (await (await fetch(`${gw.url}/health`)).json()) as { queue: { workers?: number } };
      if (health.queue.workers === workerCount) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const sessions = Array.from(
      { length: options.sessions },
      (_, i) => `s${i}-${randomBytes(3).toString("hex")}`,
    );
    for (const s of sessions) await postTurn(gw.url, `setup ${s}`, s);
    const tool: number[] = [];
    const chat: number[] = [];
    for (let t = 0; t < options.turnsPerSession; t++)
      for (const s of sessions) {
        for (const [kind, list] of [
          ["edit", tool],
          ["chat", chat],
        ] as const) {
          const t0 = performance.now();
          await postTurn(gw.url, `${kind} ${s} ${t}`, s);
          list.push(performance.now() - t0);
        }
      }
    const moved = sessions.reduce((n, s) => n + Number(ranOn.get(`${s}:moved`) ?? 0), 0);
    return {
      workers: workerCount,
      handover,
      toolP50Ms: round(median(tool)),
      toolP99Ms: round(percentile(tool, 99)),
      chatP50Ms: round(median(chat)),
      chatP99Ms: round(percentile(chat, 99)),
      movedShare: round(moved / Math.max(1, tool.length - sessions.length)),
    };
  } finally {
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(
      workers.map((w) => new Promise((r) => (w.child.exitCode === null ? w.child.once("exit", r) : r(null)))),
    );
    for (const w of workers) rmSync(w.home, { recursive: true, force: true });
    await gw.stop();
  }
}

const signed = (ms: number) => `${ms >= 0 ? "+" : "−"}${round(Math.abs(ms))}`;

export function handoverMarkdown(
  result: HandoverBenchResult,
  options: HandoverBenchOptions,
  command: string,
): string {
  const rows = result.modes.map(
    (m) =>
      `| ${m.workers} | ${m.handover ? "on" : "off (before)"} | ${m.toolP50Ms} | ${m.toolP99Ms} | ${m.chatP50Ms} | ${m.chatP99Ms} | ${Math.round(m.movedShare * 100)} % |`,
  );
  const overhead = options.workerCounts.map((w) => {
    const off = result.modes.find((m) => m.workers === w && !m.handover);
    const on = result.modes.find((m) => m.workers === w && m.handover);
    return off && on
      ? `${w} worker${w > 1 ? "s" : ""}: tool turn ${signed(on.toolP50Ms - off.toolP50Ms)} ms, chat turn ${signed(on.chatP50Ms - off.chatP50Ms)} ms (p50)`
      : "";
  });
  return `## Workspace hand-over on Redis

\`${command}\` — ${machineLine()}. Real gateway and \`herald worker\` processes (own HERALD_HOME each,
\`--concurrency 1\`) on a private redis-server, \`exec.backend: local\`, the fake model answering at once.
${options.sessions} sessions, each first writing 100 files of 1 KiB; then ${options.turnsPerSession} tool turns
(append a line to a file) and as many chat turns (no tool) per session, one turn at a time, round robin.
"moved": tool turns that ran on another worker than the session's previous one (a pull).

| workers | hand-over | tool turn p50 ms | p99 | chat turn p50 ms | p99 | moved |
|---|---|---|---|---|---|---|
${rows.join("\n")}

Difference, on minus off: ${overhead.filter(Boolean).join("; ")}. On a shared machine these process-level
figures move by tens of ms from run to run (load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores at the
end of this run); the per-operation figures below are the hand-over's own cost.`;
}

/** The hand-over's own operations, timed in one process over HTTP (less exposed to scheduling noise). */
export interface HandoverOpsResult {
  /** A turn on the worker that holds the latest generation: one request. */
  currentP50Ms: number;
  /** A turn on a worker one generation behind (one changed file of 100): check, download, write. */
  pullP50Ms: number;
  /** After a turn that changed one file of 100: scan, hash one file, upload, commit. */
  pushP50Ms: number;
  /** After a turn that changed nothing: the scan alone. */
  emptyPushP50Ms: number;
}

export async function benchHandoverOps(rounds: number): Promise<HandoverOpsResult> {
  const { WorkspaceHub, WorkspaceHandover, HttpHandoverRemote } = await import(
    "../agent/exec/handover/index.js"
  );
  const { LocalBackend, WorkspaceManager } = await import("../agent/exec/index.js");
  const { SqliteState, SqliteWorkspaceGenerations } = await import("../sessions/index.js");
  const { createWorkspaceApiRoute } = await import("../app/workspace-api.js");
  const { startHttpServer } = await import("../gateway/http/index.js");
  const { silentLogger } = await import("../core/logger.js");
  const { writeFileSync } = await import("node:fs");
  const home = mkdtempSync(join(tmpdir(), "herald-bench-handover-"));
  const state = SqliteState.open(":memory:");
  const hub = new WorkspaceHub({
    dir: join(home, "store"),
    generations: new SqliteWorkspaceGenerations(state.database),
    quotaBytes: 1 << 30,
  });
  const key = "bench";
  const server = await startHttpServer(
    {
      logger: silentLogger(),
      adapters: new Map(),
      nodeRoutes: [createWorkspaceApiRoute({ hub, key, logger: silentLogger() })],
    },
    "127.0.0.1",
    0,
  );
  const backend = new LocalBackend();
  const owner = { sessionKey: "bench:dm:1" };
  const worker = (name: string) => ({
    manager: new WorkspaceManager({ rootDir: join(home, name) }),
    handover: new WorkspaceHandover({
      remote: new HttpHandoverRemote({ url: server.url, key, maxBlobBytes: 1 << 30 }),
      backend,
      worker: name,
      quotaBytes: 1 << 30,
    }),
  });
  const [a, b] = [worker("a"), worker("b")];
  const time = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const current: number[] = [];
  const pull: number[] = [];
  const push: number[] = [];
  const empty: number[] = [];
  try {
    const wsA = await a.manager.ensure(owner);
    const wsB = await b.manager.ensure(owner);
    await a.handover.pull(wsA);
    for (let i = 0; i < 100; i++) writeFileSync(join(wsA.dir, `f${i}`), randomBytes(1024));
    await a.handover.push(wsA);
    for (let r = 0; r < rounds; r++) {
      // A turn moves from A to B and back: B pulls A's change, A pulls B's.
      for (const [from, to] of [
        [a, b],
        [b, a],
      ] as const) {
        const wsFrom = from === a ? wsA : wsB;
        const wsTo = to === a ? wsA : wsB;
        await from.handover.pull(wsFrom);
        writeFileSync(join(wsFrom.dir, `f${r % 100}`), randomBytes(1024));
        push.push(await time(() => from.handover.push(wsFrom)));
        current.push(await time(() => from.handover.pull(wsFrom)));
        empty.push(await time(() => from.handover.push(wsFrom)));
        pull.push(await time(() => to.handover.pull(wsTo)));
        to.handover.release(wsTo);
      }
    }
  } finally {
    await server.close();
    state.close();
    rmSync(home, { recursive: true, force: true });
  }
  return {
    currentP50Ms: round(median(current)),
    pullP50Ms: round(median(pull)),
    pushP50Ms: round(median(push)),
    emptyPushP50Ms: round(median(empty)),
  };
}

export function handoverOpsMarkdown(ops: HandoverOpsResult, rounds: number): string {
  return `Per operation, in one process over HTTP on loopback (the gateway's route, the worker's client, the
local backend; a workspace of 100 files of 1 KiB, ${rounds * 2} turns moving between two workers): a turn on
the worker that holds the latest generation **${ops.currentP50Ms} ms**; a turn that moved (one changed file
to pull) **${ops.pullP50Ms} ms**; the push after a turn that changed one file **${ops.pushP50Ms} ms**, after one that
changed nothing **${ops.emptyPushP50Ms} ms** (the scan). A turn that called no tool does only the first. With the
hand-over off, and on one machine, none of these run.`;
}
