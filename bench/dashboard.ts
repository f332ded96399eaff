/**
 * Dashboard scenario: a state file with 10,000 sessions and 1,000,000 messages (written in one
 * transaction with prepared statements, the search index built in bulk), the gateway on it as a child
 * process (`herald gateway`), and the dashboard's pages fetched over loopback with a login cookie:
 * each page's round trip, which is the server's time plus a loopback hop. Then the gateway's turn
 * latency with a dashboard live-update stream (SSE) open and without, in alternating rounds.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteState } from "../sessions/sqlite-state.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { cpuSeconds, freePort, machineLine, median, percentile, postTurn, round } from "./lib.js";

export interface DashboardBenchOptions {
  root: string;
  sessions: number;
  messagesPerSession: number;
  /** Requests per page (after 20 warm-up requests). */
  requests: number;
  /** Sequential turns per round of the SSE comparison. */
  turnsPerRound: number;
  /** Rounds per variant (SSE off, on, alternating). */
  rounds: number;
}

export interface PageFigure {
  page: string;
  path: string;
  /** The first request's time (nothing cached yet). */
  firstMs: number;
  p50Ms: number;
  p95Ms: number;
}

export interface DashboardBenchResult {
  generateSeconds: number;
  stateFileMb: number;
  pages: PageFigure[];
  turnP50WithoutSseMs: number;
  turnP50WithSseMs: number;
  turnRoundsWithoutSse: number[];
  turnRoundsWithSse: number[];
  /** The gateway's CPU (user + system) per turn, median of the rounds. */
  cpuMsPerTurnWithoutSse: number;
  cpuMsPerTurnWithSse: number;
  sseEventsSeen: number;
  /** Fragment refetches the stream's events caused (at most one a second). */
  pageRefetches: number;
  /** The host's 1-minute load average at the end (the machine is shared). */
  loadAverage: number;
}

const PASSWORD = "bench-dashboard-password";
const VOCABULARY = 5_000;
const agent = new HttpAgent({ keepAlive: true, maxSockets: 16 });

/** A pronounceable word for rank `i` (deterministic). */
function word(i: number): string {
  const syllables = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "te",
    "vo",
    "zi",
    "pe",
    "da",
    "fu",
    "go",
    "hi",
    "ju",
  ];
  let w = "";
  let n = i + 15;
  while (n > 0) {
    w += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  }
  return w;
}

/** Writes the sessions and messages into `path` (an empty, migrated state file). */
export function generate(path: string, sessions: number, perSession: number): void {
  SqliteState.open(path).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const words = Array.from({ length: VOCABULARY }, (_, i) => word(i));
  // Zipf-like: rank r is picked with weight 1/(r+1); a cumulative table and a seeded generator.
  const cumulative: number[] = [];
  let total = 0;
  for (let r = 0; r < VOCABULARY; r++) {
    total += 1 / (r + 1);
    cumulative.push(total);
  }
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const pick = () => {
    const x = random() * total;
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  const insertSession = db.prepare(
    `INSERT INTO sessions (id, key, platform, chat_id, chat_type, user_id, created_at, last_active_at, ended_at, end_reason, title, message_count)
     VALUES (?, ?, 'telegram', ?, 'dm', ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertMessage = db.prepare(
    "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  // One usage row per turn (a user message and its answer), over three models.
  const insertUsage = db.prepare(
    `INSERT INTO usage (turn_id, model, session_id, user_id, platform, prompt_tokens, completion_tokens, cached_tokens, calls, created_at)
     VALUES (?, ?, ?, ?, 'telegram', ?, ?, ?, 1, ?)`,
  );
  const models = ["openai/gpt-4o-mini", "openai/gpt-4o", "openrouter/claude-sonnet"];
  // The sessions spread over the last 30 days, one after another.
  const spacingMs = Math.floor((30 * 86_400_000) / sessions);
  const start = Date.now() - sessions * spacingMs;
  db.transaction(() => {
    for (let s = 0; s < sessions; s++) {
      const id = randomUUID();
      const createdAt = start + s * spacingMs;
      const active = s >= sessions * 0.9;
      const text = () => Array.from({ length: 12 }, pick).join(" ");
      const title = text().slice(0, 40);
      insertSession.run(
        id,
        `telegram:dm:${s}`,
        String(s),
        String(s),
        createdAt,
        createdAt + perSession * 1000,
        active ? null : createdAt + perSession * 1000,
        active ? null : "idle",
        title,
        perSession,
      );
      for (let m = 0; m < perSession; m++) {
        insertMessage.run(id, m + 1, m % 2 === 0 ? "user" : "assistant", text(), createdAt + m * 1000);
        if (m % 2 === 1)
          insertUsage.run(
            `t${s}x${m}`,
            models[(s + m) % 3],
            id,
            String(s),
            1200 + m,
            80,
            600,
            createdAt + m * 1000,
          );
      }
    }
  })();
  db.exec("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')");
  db.exec("UPDATE fts_progress SET indexed_upto = (SELECT MAX(id) FROM messages)");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

/** GET `url` with `cookie`; resolves with the status once the body is read. */
function get(url: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent, headers: { cookie } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `password=${PASSWORD}`,
  });
  const cookie = res.headers.get("set-cookie")?.split(";")[0];
  if (res.status !== 303 || !cookie) throw new Error(`login failed: ${res.status}`);
  return cookie;
}

/**
 * Opens the live-update stream as the sessions page does: on events it fetches the page's fragment
 * again, at most once a second (the page script's throttle). Returns the events seen, the refetches
 * and a close function.
 */
function openStream(
  url: string,
  cookie: string,
): { events: () => number; refetches: () => number; close: () => void } {
  let events = 0;
  let refetches = 0;
  let last = 0;
  let busy = false;
  const refetch = () => {
    if (busy || Date.now() - last < 1000) return;
    busy = true;
    last = Date.now();
    refetches++;
    void get(`${url}/dashboard/sessions?fragment=1`, cookie).finally(() => {
      busy = false;
    });
  };
  const req = httpRequest(`${url}/dashboard/events`, { headers: { cookie } }, (res) => {
    res.on("data", (chunk: Buffer) => {
      refetch();
      events +=
        chunk.toString().split("\nevent: ").length - 1 + (chunk.toString().startsWith("event: ") ? 1 : 0);
    });
  });
  req.on("error", () => undefined);
  req.end();
  return { events: () => events, refetches: () => refetches, close: () => req.destroy() };
}

/** Runs the scenario. */
export async function benchDashboard(options: DashboardBenchOptions): Promise<DashboardBenchResult> {
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-dash-"));
  const path = join(homeDir, "state.db");
  const t0 = performance.now();
  generate(path, options.sessions, options.messagesPerSession);
  const generateSeconds = (performance.now() - t0) / 1000;
  const stateFileMb = statSync(path).size / 1024 / 1024;
  const llm = await startFakeLlm();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [join(options.root, "dist/app/cli.js"), "gateway"], {
    env: {
      ...process.env,
      HERALD_HOME: homeDir,
      API_SERVER_PORT: String(port),
      HERALD_LOG_LEVEL: "warn",
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      HERALD_LEARNING_ENABLED: "false",
      DASHBOARD_PASSWORD: PASSWORD,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
      try {
        if ((await fetch(`${url}/health`)).ok) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const cookie = await login(url);
    const db = new Database(path, { readonly: true });
    const sample = db.prepare("SELECT id FROM sessions ORDER BY last_active_at DESC LIMIT 1").get() as {
      id: string;
    };
    db.close();
    const paths: [string, string][] = [
      ["overview", "/dashboard/"],
      ["sessions list (newest 100)", "/dashboard/sessions"],
      ["search, a rare word", `/dashboard/sessions?q=${word(4_000)}`],
      ["search, two words", `/dashboard/sessions?q=${word(300)}+${word(900)}`],
      ["search, the most common word", `/dashboard/sessions?q=${word(0)}`],
      [`transcript (${options.messagesPerSession} messages)`, `/dashboard/sessions/${sample.id}`],
      ["usage, last 24 hours", "/dashboard/usage?since=24h"],
      ["usage, last 7 days", "/dashboard/usage?since=7d"],
      ["usage, all time", "/dashboard/usage?since=all"],
      ["pairing & approvals", "/dashboard/access"],
      ["cron jobs", "/dashboard/cron"],
    ];
    const pages: PageFigure[] = [];
    for (const [page, p] of paths) {
      const times: number[] = [];
      let firstMs = 0;
      for (let i = 0; i < options.requests + 20; i++) {
        const t = performance.now();
        const status = await get(`${url}${p}`, cookie);
        if (status !== 200) throw new Error(`${p} answered ${status}`);
        if (i === 0) firstMs = performance.now() - t;
        if (i >= 20) times.push(performance.now() - t);
      }
      pages.push({
        page,
        path: p,
        firstMs: round(firstMs),
        p50Ms: round(median(times)),
        p95Ms: round(percentile(times, 95)),
      });
    }

    // Turn latency with and without a live stream open, rounds alternating so drift weighs on both.
    const rounds = { off: [] as number[], on: [] as number[] };
    const cpu = { off: [] as number[], on: [] as number[] };
    let sseEventsSeen = 0;
    let pageRefetches = 0;
    const session = randomUUID();
    for (let i = 0; i < 30; i++) await postTurn(url, `warm up ${i}`, session);
    for (let r = 0; r < options.rounds * 2; r++) {
      const withSse = r % 2 === 1;
      const stream = withSse ? openStream(url, cookie) : undefined;
      if (stream) await new Promise((resolve) => setTimeout(resolve, 100));
      const times: number[] = [];
      const cpu0 = cpuSeconds(child.pid!);
      for (let i = 0; i < options.turnsPerRound; i++) {
        const t = performance.now();
        await postTurn(url, `turn ${r}.${i}`, session);
        times.push(performance.now() - t);
      }
      (withSse ? cpu.on : cpu.off).push(
        round(((cpuSeconds(child.pid!) - cpu0) * 1000) / options.turnsPerRound, 3),
      );
      if (stream) {
        sseEventsSeen += stream.events();
        pageRefetches += stream.refetches();
        stream.close();
      }
      (withSse ? rounds.on : rounds.off).push(round(median(times), 3));
    }
    return {
      generateSeconds: round(generateSeconds, 1),
      stateFileMb: round(stateFileMb, 0),
      pages,
      turnP50WithoutSseMs: round(median(rounds.off), 3),
      turnP50WithSseMs: round(median(rounds.on), 3),
      turnRoundsWithoutSse: rounds.off,
      turnRoundsWithSse: rounds.on,
      cpuMsPerTurnWithoutSse: round(median(cpu.off), 3),
      cpuMsPerTurnWithSse: round(median(cpu.on), 3),
      sseEventsSeen,
      pageRefetches,
      loadAverage: round(loadavg()[0] ?? 0, 1),
    };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await llm.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

/** The BENCHMARKS.md section. */
export function dashboardMarkdown(
  r: DashboardBenchResult,
  o: DashboardBenchOptions,
  command: string,
): string {
  const rows = r.pages.map((p) => `| ${p.page} | ${p.firstMs} | ${p.p50Ms} | ${p.p95Ms} |`);
  return `## Dashboard pages on a large state file

\`${command}\` · ${machineLine()}

A state file with ${o.sessions.toLocaleString("en-US")} sessions, ${(o.sessions * o.messagesPerSession).toLocaleString("en-US")} messages and ${((o.sessions * o.messagesPerSession) / 2).toLocaleString("en-US")} turns' usage rows, spread over 30 days (${r.stateFileMb} MB, written in ${r.generateSeconds} s: one transaction, prepared statements, the search index built in bulk), \`herald gateway\` on it as a child process, each page fetched ${o.requests} times over loopback with a login cookie after 20 warm-up requests. Times are round trips: the server's time plus one loopback hop. The usage pages over days sum each past UTC day once and keep it (the first request pays for that), and sum today live.

| page | first request ms | p50 ms | p95 ms |
|---|---|---|---|
${rows.join("\n")}

The gateway's turn overhead with a dashboard open: ${o.turnsPerRound} sequential turns per round through the API server (scripted model answering at once), ${o.rounds} rounds without and ${o.rounds} with a live-update stream (SSE) open, alternating, on the same state file. The stream's client behaves like an open sessions page: it receives every event (${r.sseEventsSeen} in all) and fetches the page's fragment again at most once a second (${r.pageRefetches} refetches), as the page script does.

| | without a dashboard stream | with one open |
|---|---|---|
| turn latency p50 (median of rounds) | ${r.turnP50WithoutSseMs} ms | ${r.turnP50WithSseMs} ms |
| gateway CPU per turn (median of rounds) | ${r.cpuMsPerTurnWithoutSse} ms | ${r.cpuMsPerTurnWithSse} ms |

Round medians of latency without: ${r.turnRoundsWithoutSse.join(", ")} ms; with: ${r.turnRoundsWithSse.join(", ")} ms. The machine is shared (1-minute load average ${r.loadAverage} on 2 cores at the end): wall times swing with the other tenants; the CPU per turn is the steadier figure, read from /proc in 10 ms ticks, so its resolution is ${round(10 / o.turnsPerRound, 2)} ms per turn.`;
}
