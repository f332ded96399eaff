/**
 * Cron jobs end to end: the real gateway (runner, embedded queue, SQLite, agent loop), the scripted
 * model over HTTP, and in-memory chat adapters as delivery targets. Time is driven with
 * `gateway.cron.tick(now)`: no test waits for a schedule in real time.
 */
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerCronCommands } from "../../app/cli/cron.js";
import { loadConfig } from "../../app/config.js";
import { PlatformError } from "../../core/errors.js";
import type { CronService } from "../../scheduler/cron-service.js";
import { SqliteCronStore } from "../../scheduler/sqlite-cron-store.js";
import type { CronCaller, CronJobInput, CronJobView, CronRun } from "../../scheduler/types.js";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const alice: CronCaller = { chat: { platform: "fakechat", chatId: "chat-1" }, userId: "alice" };

let harness: Harness | undefined;
let chat: FakeChatAdapter;
let mail: FakeChatAdapter;
let telegram: FakeChatAdapter;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(): Promise<Harness> {
  harness = await startHarness({
    env: { GATEWAY_ALLOWED_USERS: "fakechat:alice", HERALD_TIMEZONE: "Europe/Berlin" },
    adapters: () => {
      chat = new FakeChatAdapter();
      // Stand in for the email and Telegram adapters at the PlatformAdapter boundary.
      mail = new FakeChatAdapter("email");
      telegram = new FakeChatAdapter("telegram");
      return [chat, mail, telegram];
    },
  });
  return harness;
}

const cron = (h: Harness): CronService => h.gateway.cron;

async function create(h: Harness, input: Partial<CronJobInput>): Promise<CronJobView> {
  return cron(h).api.create({ schedule: "every 1h", prompt: "report", ...input }, alice);
}

/** The job's runs, newest first, read from the file as `herald cron list` does. */
function runsOf(h: Harness, jobId: string): CronRun[] {
  const store = SqliteCronStore.open(join(h.homeDir, "state.db"));
  try {
    return store.runs(jobId, 100);
  } finally {
    store.close();
  }
}

async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await fn();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until the job has `count` finished runs; returns them newest first. */
function finishedRuns(h: Harness, jobId: string, count: number): Promise<CronRun[]> {
  return until(
    () => runsOf(h, jobId).filter((r) => r.status !== "queued" && r.status !== "running"),
    (runs) => runs.length >= count,
    `${count} finished runs of ${jobId}`,
  );
}

describe("cron jobs", () => {
  it("runs a job at its tick in a fresh session and delivers the reply to the origin chat", async () => {
    const h = await start();
    const job = await create(h, { prompt: "Summarise the overnight build failures.", name: "builds" });
    expect(job).toMatchObject({ state: "active", deliver: "origin", schedule: "every 1h" });
    h.llm.script({ text: "2 builds failed overnight." });
    await cron(h).tick(job.nextRunAt! - 1);
    expect(h.llm.requests).toHaveLength(0);
    await cron(h).tick(job.nextRunAt!);
    expect(await chat.waitForTexts(1)).toEqual(["2 builds failed overnight."]);
    const [run] = await finishedRuns(h, job.id, 1);
    expect(run).toMatchObject({
      status: "ok",
      kind: "scheduled",
      tickAt: job.nextRunAt,
      output: "2 builds failed overnight.",
    });
    expect(run!.finishedAt! - run!.startedAt!).toBeGreaterThanOrEqual(0);
    // A fresh session: the job's prompt is the only user message; the run can't schedule more jobs.
    const request = h.llm.requests[0]!;
    expect(request.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "Summarise the overnight build failures.",
    ]);
    expect(request.messages[0]?.content).toContain("scheduled task");
    expect(request.tools?.map((t) => t.function.name) ?? []).not.toContain("cronjob");
    expect(request.messages[0]?.content).not.toContain("cronjob"); // nor listed to load
    // The same tick seen again (the timer, a second sync) does not run again.
    await cron(h).tick(job.nextRunAt! + 1000);
    expect(runsOf(h, job.id)).toHaveLength(1);
    const [listed] = await cron(h).api.list(alice);
    expect(listed).toMatchObject({ nextRunAt: job.nextRunAt! + HOUR, lastRun: { status: "ok" } });
  });

  it("does not deliver a [SILENT] reply, and delivers to email with the job's name as subject", async () => {
    const h = await start();
    const job = await create(h, {
      prompt: "Check disk space; only tell me if a disk is over 90%.",
      name: "Disk check",
      deliver: "email:ops@example.com, origin",
    });
    h.llm.script({ text: "[SILENT]" });
    await cron(h).tick(job.nextRunAt!);
    expect((await finishedRuns(h, job.id, 1))[0]?.status).toBe("silent");
    await h.gateway.runner.outbox.idle();
    expect(chat.texts()).toEqual([]);
    expect(mail.texts()).toEqual([]);

    h.llm.script({ text: "Disk /var is 93% full." });
    await cron(h).api.runNow(job.id, alice);
    expect(await mail.waitForTexts(1)).toEqual(["Disk /var is 93% full."]);
    expect(mail.sent[0]).toMatchObject({
      chat: { platform: "email", chatId: "ops@example.com" },
      message: { subject: "Disk check" },
    });
    expect(await chat.waitForTexts(1)).toEqual(["Disk /var is 93% full."]);
    expect((await finishedRuns(h, job.id, 2))[0]).toMatchObject({ kind: "manual", status: "ok" });
  });

  it("a restart during a run neither fires the tick again nor delivers twice", async () => {
    const h = await start();
    const job = await create(h, {});
    h.llm.script({ text: "STALE", delayMs: 20_000 });
    await cron(h).tick(job.nextRunAt!);
    await h.llm.waitForRequests(1);
    // Kill: nothing drains. The cron service goes down with the process.
    const service = cron(h);
    await h.crash();
    await service.stop();
    h.llm.script({ text: "Report after restart." });
    await h.start();
    // The timer sees the claimed tick again (and a minute later): no second run.
    await cron(h).tick(job.nextRunAt!);
    await cron(h).tick(job.nextRunAt! + MIN);
    expect(await chat.waitForTexts(1)).toEqual(["Report after restart."]);
    const runs = await finishedRuns(h, job.id, 1);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "ok", output: "Report after restart." });
    await h.gateway.runner.outbox.idle();
    expect(chat.texts()).toEqual(["Report after restart."]);
    // The resumed turn, not a new one: two model calls in all (the killed one and its rerun).
    expect(h.llm.requests).toHaveLength(2);
  });

  it("after downtime spanning ten ticks runs once; a miss of more than half a period waits", async () => {
    const h = await start();
    const job = await create(h, { prompt: "hourly status" });
    const first = job.nextRunAt!;
    await h.restart();
    // Down from before the first tick until 10 min after the tenth.
    await cron(h).tick(first + 9 * HOUR + 10 * MIN);
    await cron(h).tick(first + 9 * HOUR + 11 * MIN);
    const runs = await finishedRuns(h, job.id, 1);
    expect(runs.map((r) => r.tickAt)).toEqual([first + 9 * HOUR]);
    expect(await chat.waitForTexts(1)).toEqual(["echo: hourly status"]);

    const late = await create(h, { prompt: "late status" });
    // 40 minutes past a tick of an hourly job: too late, the job waits for its next tick.
    await cron(h).tick(late.nextRunAt! + 9 * HOUR + 40 * MIN);
    expect(runsOf(h, late.id)).toEqual([]);
    expect((await cron(h).api.list(alice)).find((j) => j.id === late.id)?.nextRunAt).toBe(
      late.nextRunAt! + 10 * HOUR,
    );
    await cron(h).tick(late.nextRunAt! + 10 * HOUR);
    expect((await finishedRuns(h, late.id, 1)).map((r) => r.tickAt)).toEqual([late.nextRunAt! + 10 * HOUR]);
  });

  it("the missed-run policy is a per-job override: run always catches up once, skip never", async () => {
    const h = await start();
    const always = await create(h, { prompt: "always", missedRuns: "run" });
    const never = await create(h, { prompt: "never", missedRuns: "skip" });
    const at = Math.max(always.nextRunAt!, never.nextRunAt!) + 5 * HOUR + 40 * MIN;
    await cron(h).tick(at);
    const runs = await finishedRuns(h, always.id, 1);
    expect(runs).toHaveLength(1);
    expect(runsOf(h, never.id)).toEqual([]);
    expect(await chat.waitForTexts(1)).toEqual(["echo: always"]);
  });

  it("the cronjob tool creates a job from a conversation, and it fires in that chat", async () => {
    const h = await start();
    h.llm.script(
      {
        toolCalls: [
          {
            name: "cronjob",
            arguments: {
              action: "create",
              schedule: "in 20m",
              prompt: "Remind Alice to stretch.",
              name: "stretch",
            },
          },
        ],
      },
      { text: "Done: I'll remind you in 20 minutes." },
    );
    await chat.inject({ text: "remind me in 20 minutes to stretch" });
    expect(await chat.waitForTexts(1)).toEqual(["Done: I'll remind you in 20 minutes."]);
    const toolResult = h.llm.requests[1]?.messages.find((m) => m.role === "tool")?.content;
    expect(toolResult).toMatch(/^Created job j[0-9a-f]+ "stretch": once at .* → origin; next run/);
    const [job] = await cron(h).api.list(alice);
    expect(job).toMatchObject({ name: "stretch", state: "active", deliver: "origin" });

    h.llm.script({ text: "Time to stretch!" });
    await cron(h).tick(job!.nextRunAt!);
    expect((await chat.waitForTexts(2))[1]).toBe("Time to stretch!");
    expect(chat.sent[1]?.chat).toEqual({ platform: "fakechat", chatId: "chat-1" });
    await finishedRuns(h, job!.id, 1);
    expect((await cron(h).api.list(alice))[0]?.state).toBe("done");
  });

  it("the cronjob tool lists, pauses, resumes and removes only the caller's own jobs", async () => {
    const h = await start();
    const mine = await create(h, { name: "mine", schedule: "0 9 * * *" });
    const bob: CronCaller = { chat: alice.chat, userId: "bob" };
    const theirs = await cron(h).api.create({ schedule: "every 2h", prompt: "bob's", name: "theirs" }, bob);
    const tool = (args: Record<string, unknown>) =>
      h.llm.script({ toolCalls: [{ name: "cronjob", arguments: args }] }, { text: "ok" });
    const lastToolResult = () => h.llm.requests.at(-1)?.messages.findLast((m) => m.role === "tool")?.content;
    const say = async (args: Record<string, unknown>) => {
      tool(args);
      const before = chat.texts().length;
      await chat.inject({ text: "manage my jobs" });
      await chat.waitForTexts(before + 1);
      return lastToolResult();
    };
    const listed = await say({ action: "list" });
    expect(listed).toMatch(
      new RegExp(
        `^${mine.id} "mine": cron 0 9 \\* \\* \\* \\(Europe/Berlin\\) → origin; next run \\S+ 09:00 Europe/Berlin`,
      ),
    );
    expect(listed).not.toContain(theirs.id);
    expect(await say({ action: "pause", id: mine.id })).toMatch(/^Paused job .*; paused$/);
    expect((await cron(h).api.list(alice))[0]?.state).toBe("paused");
    expect(await say({ action: "resume", id: mine.id })).toMatch(/^Resumed job .*next run/);
    expect(await say({ action: "update", id: mine.id, schedule: "every 3h" })).toMatch(/every 3h/);
    expect(await say({ action: "remove", id: theirs.id })).toMatch(/error: .*There is no job .* of yours/);
    expect(await say({ action: "create", schedule: "every 5s", prompt: "x" })).toMatch(
      /shortest interval is 1 minute/,
    );
    expect(await say({ action: "remove", id: mine.id })).toBe(`Removed job ${mine.id}.`);
    expect(await cron(h).api.list(alice)).toEqual([]);
    expect((await cron(h).api.list(bob)).map((j) => j.id)).toEqual([theirs.id]);
  });

  it("/sethome makes a chat its platform's home channel for jobs that deliver to the platform", async () => {
    const h = await start();
    const home = { platform: "fakechat", chatId: "team-room" };
    expect(await chat.inject({ chat: home, chatType: "group", text: "/sethome" })).toBe("command");
    expect((await chat.waitForTexts(1))[0]).toMatch(/home channel/);
    const job = await create(h, { deliver: "fakechat", prompt: "standup reminder" });
    await cron(h).tick(job.nextRunAt!);
    await until(
      () => chat.sent.length,
      (n) => n >= 2,
      "the report",
    );
    expect(chat.sent[1]).toMatchObject({ chat: home, message: { text: "echo: standup reminder" } });
  });

  it("reports an unreachable target once to the origin, and keeps delivering elsewhere", async () => {
    const h = await start();
    const job = await create(h, { deliver: "discord:123,origin", prompt: "ping" });
    await cron(h).tick(job.nextRunAt!);
    await finishedRuns(h, job.id, 1);
    await cron(h).tick(job.nextRunAt! + HOUR);
    await finishedRuns(h, job.id, 2);
    await h.gateway.runner.outbox.idle();
    const texts = chat.texts();
    expect(texts.filter((t) => t.includes("can't deliver to discord:123"))).toHaveLength(1);
    expect(texts.find((t) => t.includes("discord"))).toMatch(/discord is not connected/);
    expect(texts.filter((t) => t === "echo: ping")).toHaveLength(2);
  });

  it("reports a target whose platform refuses delivery once, and again only after it worked", async () => {
    const h = await start();
    const job = await create(h, { deliver: "email:ops@example.com,origin", prompt: "mail me" });
    const refuse = () => {
      mail.failNext = {
        count: 1,
        error: new PlatformError("email", "mailbox unavailable", { retryable: false }),
      };
    };
    const runOnce = async (n: number) => {
      await cron(h).api.runNow(job.id, alice);
      await finishedRuns(h, job.id, n);
      await until(
        () => chat.texts().filter((t) => t === "echo: mail me").length,
        (c) => c >= n,
        "the origin copy",
      );
      await h.gateway.runner.outbox.idle();
    };
    const reports = () => chat.texts().filter((t) => t.includes("can't deliver to email:ops@example.com"));
    refuse();
    await runOnce(1);
    refuse();
    await runOnce(2);
    expect(reports()).toHaveLength(1);
    expect(reports()[0]).toMatch(/delivering to email:ops@example.com failed.*mailbox unavailable/);
    await runOnce(3);
    expect(mail.texts()).toEqual(["echo: mail me"]);
    refuse();
    await runOnce(4);
    expect(reports()).toHaveLength(2);
  });

  it("a failing job reports once, backs off, and recovers", async () => {
    const h = await start();
    const job = await create(h, { prompt: "flaky check" });
    const t = job.nextRunAt!;
    h.llm.script({ error: { status: 400, message: "bad request" } });
    await cron(h).tick(t);
    await finishedRuns(h, job.id, 1);
    h.llm.script({ error: { status: 400, message: "bad request" } });
    await cron(h).tick(t + HOUR);
    await finishedRuns(h, job.id, 2);
    // Two failures in a row: the next tick is skipped.
    await cron(h).tick(t + 2 * HOUR);
    await cron(h).tick(t + 3 * HOUR);
    const runs = await finishedRuns(h, job.id, 3);
    expect(runs.map((r) => [r.tickAt - t, r.status])).toEqual([
      [3 * HOUR, "ok"],
      [HOUR, "failed"],
      [0, "failed"],
    ]);
    await h.gateway.runner.outbox.idle();
    const reports = chat.texts().filter((x) => x.includes("failed"));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/Scheduled job "flaky check" .* failed/);
    expect(chat.texts().at(-1)).toBe("echo: flaky check");
    expect((await cron(h).api.list(alice))[0]?.failures).toBe(0);
  });

  it("cancels a run past its time limit; its late reply is never delivered", async () => {
    const h = await start();
    const job = await create(h, { prompt: "slow report", timeoutMinutes: 1 });
    h.llm.script({ text: "TOO LATE", delayMs: 20_000 });
    await cron(h).tick(job.nextRunAt!);
    await h.llm.waitForRequests(1);
    const [running] = runsOf(h, job.id);
    await cron(h).tick(running!.startedAt! + MIN);
    const [run] = await finishedRuns(h, job.id, 1);
    expect(run).toMatchObject({ status: "timeout", error: expect.stringMatching(/time limit/) });
    await h.llm.waitForClosedEarly(1);
    await h.gateway.runner.outbox.idle();
    expect(chat.texts()).toHaveLength(1);
    expect(chat.texts()[0]).toMatch(/failed: stopped after 1m, its time limit/);
  });

  it("caps parallel runs: extra runs wait queued and start as others finish", async () => {
    const h = await start();
    const jobs = await Promise.all([1, 2, 3].map((i) => create(h, { prompt: `job ${i}` })));
    h.llm.script({ text: "one", delayMs: 2_000 }, { text: "two", delayMs: 2_000 }, { text: "three" });
    await cron(h).tick(Math.max(...jobs.map((j) => j.nextRunAt!)));
    const open = runsOf(h, jobs[2]!.id).concat(runsOf(h, jobs[0]!.id), runsOf(h, jobs[1]!.id));
    expect(open.map((r) => r.status).sort()).toEqual(["queued", "running", "running"]);
    expect((await chat.waitForTexts(3)).sort()).toEqual(["one", "three", "two"]);
  });
});

describe("herald cron (CLI)", () => {
  it("adds, lists, runs and removes jobs; a running gateway picks up a CLI change without restart", async () => {
    const h = await start();
    const out: string[] = [];
    const err: string[] = [];
    const cli = async (...args: string[]) => {
      const program = new Command().exitOverride();
      registerCronCommands(program, {
        config: () => loadConfig({ env: { HERALD_HOME: h.homeDir, HERALD_TIMEZONE: "Europe/Berlin" } }),
        out: (t) => void out.push(t),
        err: (t) => void err.push(t),
      });
      out.length = 0;
      err.length = 0;
      // The CLI is its own process in real use. Here it shares the gateway's thread, so it must not meet
      // the gateway's open commit batch: SQLite's busy wait would block the event loop that commits it.
      h.gateway.state.flush();
      await program.parseAsync(["cron", ...args], { from: "user" });
      return out.join("");
    };

    const id = (
      await cli(
        "add",
        "--schedule",
        "0 8 * * 1-5",
        "--prompt",
        "Morning brief",
        "--deliver",
        "telegram:42",
        "--name",
        "brief",
      )
    ).trim();
    expect(id).toMatch(/^j[0-9a-f]{10}$/);
    expect(err.join("")).toMatch(/Added: .*cron 0 8 \* \* 1-5 \(Europe\/Berlin\)/);

    // `run` queues a run in the file; the gateway's poll notices and starts it (no restart, no tick).
    expect(await cli("run", id)).toMatch(/Queued run c[0-9a-f]+ of j/);
    expect(await telegram.waitForTexts(1)).toEqual(["echo: Morning brief"]);
    expect(telegram.sent[0]?.chat).toEqual({ platform: "telegram", chatId: "42" });
    await finishedRuns(h, id, 1);

    const listed = await cli("list");
    expect(listed).toMatch(
      new RegExp(
        `${id}  cron 0 8 \\* \\* 1-5 \\(Europe/Berlin\\)  → telegram:42  next \\S+ 08:00 Europe/Berlin  "brief"`,
      ),
    );
    expect(listed).toMatch(/prompt: Morning brief/);
    expect(listed).toMatch(/manual ok {2}\d+s {2}echo: Morning brief/);

    await cli("add", "--schedule", "every 10s", "--prompt", "x", "--deliver", "local");
    expect(err.join("")).toMatch(/shortest interval is 1 minute/);
    expect(process.exitCode).toBe(1);
    process.exitCode = 0;
    await cli("add", "--schedule", "in 5m", "--prompt", "x", "--deliver", "origin");
    expect(err.join("")).toMatch(/command line has none/);
    process.exitCode = 0;

    expect(await cli("remove", id)).toBe(`Removed job ${id}.\n`);
    expect(await cli("list")).toMatch(/No scheduled jobs/);
    await cli("run", id);
    expect(err.join("")).toMatch(/No job/);
    process.exitCode = 0;
  });
});
