/**
 * The cron service: claims due ticks, runs each as a turn of its own fresh session through the
 * GatewayRunner (whose commit delivers the reply to the job's targets through the outbox, `[SILENT]`
 * excepted), records run history, enforces the run time limit and the parallel-run cap, backs off
 * failing jobs and reports failures and unreachable targets once. It also serves `CronStateApi`.
 *
 * Exactly once: a tick runs only after the job's `next_run_at` was moved past it by compare-and-set in
 * SQLite, together with the queued run row. A run's turn id is the run id, so re-submitting after a
 * crash finds the turn instead of adding one; the runner resumes open turns at start.
 */

import type { DeliveryRule } from "../core/access.js";
import { formatChat, parseChat, sessionKey } from "../core/chat.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { isSilent, type TurnControl, type TurnRecord, type TurnResult } from "../core/turn.js";
import type { ChatRef } from "../core/types.js";
import type { OutboxItem, SessionStore, TurnJournal } from "../sessions/types.js";
import { createCronApi } from "./cron-api.js";
import type { HomeChannels } from "./home-channels.js";
import { formatDuration, latestOccurrence, nextOccurrence, periodAt, runsWhenLate } from "./schedule.js";
import type { FinalRunStatus, SqliteCronStore } from "./sqlite-cron-store.js";
import { type ResolvedTargets, resolveTargets, type TargetEnvironment } from "./targets.js";
import { runToolsets } from "./toolsets.js";
import type { CronJob, CronRun, CronStateApi, Scheduler, Tick, ToolsetLimit } from "./types.js";

/** Options of {@link CronService}. */
export interface CronServiceOptions {
  store: SqliteCronStore;
  scheduler: Scheduler;
  /** The gateway's turn port: runs are submitted, cancelled and reported through it. */
  control: TurnControl;
  /** The gateway's sessions (each run opens a fresh one) and turn journal. */
  sessions: Pick<SessionStore, "open" | "load" | "reset">;
  turns: Pick<TurnJournal, "get">;
  /** Resolves once the gateway's writes so far are committed. */
  committed: () => Promise<void>;
  /** The gateway's events: the service follows its runs' turns and deliveries through them. */
  listeners: CronListeners;
  homes: HomeChannels;
  /** IANA zone of schedules. */
  timezone: string;
  /** Toolsets of jobs that name none (the cron toolset itself is left out). */
  defaultToolsets: readonly string[];
  /** Platform names a target may name: every platform module's, and any adapter running besides. */
  platforms: () => Iterable<string>;
  /** Parses a chat string with the platforms' chat-id rules. @defaultValue `parseChat` */
  parseChat?: (value: string) => ChatRef | undefined;
  /**
   * The owner policy: a job whose maker is no owner delivers only to its origin (checked when a job is
   * made or changed, and again at each run). @defaultValue none: every target is delivered
   */
  deliveryRule?: DeliveryRule | undefined;
  /**
   * The toolsets a turn of a job's maker's chat gets: a job names no others (checked when it is made or
   * changed), and each run gets at most these. @defaultValue none: a run gets the toolsets its job names
   */
  toolsetLimit?: ToolsetLimit | undefined;
  logger: Logger;
  /** @defaultValue Date.now */
  now?: () => number;
  /** Runs at once across all jobs; more wait, queued. @defaultValue 2 */
  maxParallelRuns?: number;
  /** Run time limit of jobs that set none. @defaultValue 600_000 (10 minutes) */
  runTimeoutMs?: number;
  /** How often to look for jobs changed by another process (the CLI). @defaultValue 3000 */
  pollIntervalMs?: number;
}

const MAX_OUTPUT_CHARS = 4_000;
const DAY_MS = 86_400_000;

/**
 * The gateway's events a cron service follows (the runner's `on`): each subscription returns its
 * unsubscribe. Handlers must not throw.
 */
export interface CronListeners {
  on<T extends CronFollowedEvent["type"]>(
    type: T,
    handler: (event: Extract<CronFollowedEvent, { type: T }>) => void,
  ): () => void;
}

/** The gateway's events a cron service follows: its runs' results and their deliveries. */
export type CronFollowedEvent =
  | { type: "turn-finished"; turn: TurnRecord; result: TurnResult }
  | { type: "delivery-settled"; item: OutboxItem; outcome: "delivered" | "failed" };

/** Ticks skipped after `failures` failed runs in a row: 0, 1, 3, 7… at most a day's worth. */
export function skipTicksAfter(failures: number, periodMs: number): number {
  const cap = Number.isFinite(periodMs) ? Math.max(0, Math.floor(DAY_MS / periodMs) - 1) : 0;
  return Math.min(2 ** Math.min(failures - 1, 30) - 1, cap);
}

/** Runs cron jobs as turns of the gateway. Build it before `runner.start()`; `start()` it after. */
export class CronService {
  /** The `StateClient.cron` member the `cronjob` tool uses. */
  readonly api: CronStateApi;
  readonly #o: Required<Omit<CronServiceOptions, "logger" | "parseChat" | "deliveryRule" | "toolsetLimit">>;
  readonly #toolsetLimit: ToolsetLimit | undefined;
  readonly #rule: DeliveryRule | undefined;
  readonly #parseChat: (value: string) => ChatRef | undefined;
  readonly #log: Logger;
  /** Ends the service's subscriptions to the gateway's events. */
  readonly #unsubscribe: (() => void)[];
  /** What the scheduler was told per job (schedule, paused, done), to tell it only changes. */
  readonly #told = new Map<string, string>();
  readonly #timeouts = new Map<string, NodeJS.Timeout>();
  #version = -1;
  #syncing: Promise<void> = Promise.resolve();
  #poll: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  /** The latest time `tick(now)` said had come: the service's clock never runs behind it. */
  #cameAt = 0;

  constructor(options: CronServiceOptions) {
    this.#o = {
      now: Date.now,
      maxParallelRuns: 2,
      runTimeoutMs: 600_000,
      pollIntervalMs: 3_000,
      ...options,
    };
    this.#parseChat = options.parseChat ?? ((value) => parseChat(value));
    this.#rule = options.deliveryRule;
    this.#toolsetLimit = options.toolsetLimit;
    this.#log = options.logger.child({ component: "cron" });
    this.api = createCronApi({
      store: options.store,
      timezone: options.timezone,
      now: () => this.#now(),
      knownPlatforms: () => this.#knownPlatforms(),
      changed: () => this.sync(),
      deliveryRule: options.deliveryRule,
      parseChat: this.#parseChat,
      toolsetLimit: options.toolsetLimit,
    });
    this.#unsubscribe = [
      options.listeners.on("turn-finished", ({ turn, result }) => {
        if (!this.#stopped) this.#guard("turn finished", () => this.#onTurnFinished(turn, result));
      }),
      options.listeners.on("delivery-settled", ({ item, outcome }) => {
        if (this.#stopped) return;
        this.#guard("delivery settled", () =>
          this.#onDelivery(item.turnId, item.chat, outcome, item.lastError),
        );
      }),
    ];
  }

  /** Finishes what a previous process left (runs in flight, queued runs), then starts firing ticks. */
  async start(): Promise<void> {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const now = this.#now();
    for (const run of this.#o.store.openRuns()) if (run.status === "running") this.#recover(run, now);
    const known = new Set(this.#o.store.listJobs().map((j) => j.id));
    for (const { jobId } of await this.#o.scheduler.list())
      if (!known.has(jobId)) await this.#o.scheduler.remove(jobId);
    await this.sync();
    await this.#o.scheduler.start((tick, at) => this.#onTick(tick, at));
    this.#poll = setInterval(() => {
      if (this.#o.store.isOpen && this.#o.store.version() !== this.#version) void this.sync();
    }, this.#o.pollIntervalMs);
    this.#poll.unref?.();
  }

  /** Stops firing and closes the scheduler and the store (the service owns both). Runs in flight stay open. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    // Runs that finish from now on are settled by the next start's recovery.
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    if (this.#poll) clearInterval(this.#poll);
    for (const timer of this.#timeouts.values()) clearTimeout(timer);
    this.#timeouts.clear();
    await this.#syncing;
    await this.#o.scheduler.stop();
    this.#o.store.close();
  }

  /**
   * Handles time `now` as having come: picks up changes, fires due ticks, stops runs past their time
   * limit, starts queued runs; from then on the service's clock is at least `now`. The timer does this
   * by itself; tests call it to drive time.
   */
  async tick(now: number): Promise<void> {
    this.#cameAt = Math.max(this.#cameAt, now);
    await this.sync();
    await this.#o.scheduler.tick?.(now);
    for (const run of this.#o.store.openRuns()) {
      if (
        run.status === "running" &&
        run.startedAt !== undefined &&
        run.startedAt + this.#limitOf(run) <= now
      )
        this.#expire(run.id, now);
    }
    this.#pump(now);
    // What this tick wrote (runs queued, turns started) is in the file before it returns.
    await this.#o.committed();
  }

  /** Tells the scheduler about jobs added, changed or removed (by anyone), and starts queued runs. */
  sync(): Promise<void> {
    this.#syncing = this.#syncing
      .then(() => this.#sync())
      .catch((err: unknown) => {
        // Look again at the next poll (a scheduler on Redis may be back by then).
        this.#version = -1;
        this.#warn("sync failed", err);
      });
    return this.#syncing;
  }

  async #sync(): Promise<void> {
    if (this.#stopped) return;
    const { store, scheduler } = this.#o;
    this.#version = store.version();
    const seen = new Set<string>();
    for (const job of store.listJobs()) {
      seen.add(job.id);
      const told = JSON.stringify([job.schedule, job.paused, job.nextRunAt === undefined]);
      if (this.#told.get(job.id) === told) continue;
      await scheduler.upsert(job);
      this.#told.set(job.id, told);
    }
    for (const id of this.#told.keys()) {
      if (seen.has(id)) continue;
      await scheduler.remove(id);
      this.#told.delete(id);
    }
    if (this.#started) this.#pump(this.#now());
  }

  /** A due tick: claim the job's latest due occurrence (once), queue its run unless late or backing off. */
  async #onTick(tick: Tick, now: number): Promise<void> {
    const { store } = this.#o;
    const job = store.getJob(tick.jobId);
    if (!job || job.paused || job.nextRunAt === undefined || job.nextRunAt > now) return;
    const tickAt = latestOccurrence(job.schedule, job.nextRunAt, now);
    const nextRunAt = nextOccurrence(job.schedule, Math.max(tickAt, now));
    const lateMs = now - tickAt;
    const onTime = runsWhenLate(job.missedRuns ?? "auto", lateMs, periodAt(job.schedule, tickAt));
    const backingOff = onTime && job.skipTicks > 0;
    const claim = { tickAt, nextRunAt, consumeSkip: backingOff, queueRun: onTime && !backingOff };
    const claimed = store.claimTick(job.id, job.nextRunAt, claim, now);
    if (!claimed) return;
    const log = this.#log.child({ jobId: job.id, tickAt });
    if (claimed === "claimed" && !onTime) log.info({ lateMs }, "missed tick skipped (too late)");
    else if (claimed === "claimed")
      log.info({ skipTicks: job.skipTicks - 1 }, "tick skipped while backing off");
    if (nextRunAt === undefined) await this.sync();
    this.#pump(now);
  }

  /** Starts queued runs while fewer than `maxParallelRuns` run. */
  #pump(now: number): void {
    if (!this.#started || this.#stopped) return;
    const open = this.#o.store.openRuns();
    let running = open.filter((r) => r.status === "running").length;
    for (const run of open) {
      if (running >= this.#o.maxParallelRuns) return;
      if (run.status === "queued" && this.#guard("start run", () => this.#startRun(run, now))) running++;
    }
  }

  #startRun(run: CronRun, now: number): boolean {
    const { store } = this.#o;
    const job = store.getJob(run.jobId);
    if (!job) {
      store.finishRun(run.id, { status: "cancelled", error: "the job was removed" }, now);
      return false;
    }
    const key = sessionKey(sessionPartsOf(job, run));
    if (!store.startRun(run.id, key, now)) return false;
    this.#submit(job, run, key, now);
    this.#armTimeout(run.id, now + this.#limitOf(run), now);
    return true;
  }

  /** Opens the run's fresh session and submits its turn, unless a turn of this run exists already. */
  #submit(job: CronJob, run: CronRun, key: string, now: number): void {
    const { control, turns, sessions } = this.#o;
    if (turns.get(run.id)) return;
    const targets = this.#permitted(job, resolveTargets(job.deliver, job.origin, this.#targetEnv()));
    for (const { spec, reason } of targets.unreachable) this.#reportUnreachable(job, spec, reason);
    const parts = sessionPartsOf(job, run);
    const session = sessions.open(parts, { mode: "none", idleMinutes: 1440, atHour: 4 }, now).session;
    const skills = job.skills?.length
      ? `Use the skill${job.skills.length > 1 ? "s" : ""} ${job.skills.join(", ")}.\n\n`
      : "";
    control.submit({
      id: run.id,
      sessionId: session.id,
      sessionKey: key,
      chat: { platform: "cron", chatId: job.id },
      userId: parts.userId,
      source: "cron",
      input: `${skills}${job.prompt}`,
      cron: { jobId: job.id, runId: run.id, targets: targets.chats, subject: job.name },
      options: { toolsets: this.#toolsetsOf(job), model: job.model },
    });
    this.#log.info({ jobId: job.id, runId: run.id, targets: targets.chats.length }, "cron run started");
  }

  /** A run left `running` by a previous process: resubmit, wait for the runner to resume it, or settle it. */
  #recover(run: CronRun, now: number): void {
    const { store, turns, sessions } = this.#o;
    const turn = turns.get(run.id);
    const job = store.getJob(run.jobId);
    if (!turn) {
      if (!job) store.finishRun(run.id, { status: "cancelled", error: "the job was removed" }, now);
      else this.#submit(job, run, run.sessionKey ?? sessionKey(sessionPartsOf(job, run)), now);
    }
    if (!turn || turn.status === "pending" || turn.status === "running") {
      this.#armTimeout(run.id, (run.startedAt ?? now) + this.#limitOf(run), now);
      return;
    }
    if (turn.status === "done") {
      const last = sessions
        .load(turn.sessionId)
        .filter((m) => m.turnId === turn.id && m.message.role === "assistant")
        .at(-1);
      const text = typeof last?.message.content === "string" ? last.message.content.trim() : "";
      this.#finish(run.id, { status: isSilent({ text }) ? "silent" : "ok", output: text }, now);
    } else {
      this.#finish(run.id, { status: turn.status, error: turn.error }, now);
    }
  }

  #onTurnFinished(turn: TurnRecord, result: TurnResult): void {
    if (!turn.cron) return;
    const { runId } = turn.cron;
    const now = this.#now();
    if (result.kind === "ok") {
      const text = result.reply.text.trim();
      this.#finish(runId, { status: isSilent(result.reply) ? "silent" : "ok", output: text }, now);
    } else {
      this.#finish(runId, { status: "failed", error: result.error, userMessage: result.userMessage }, now);
    }
  }

  /** Records a run's end, updates the job's failure streak, reports a new streak once, frees a slot. */
  #finish(
    runId: string,
    outcome: { status: FinalRunStatus; output?: string; error?: string | undefined; userMessage?: string },
    now: number,
  ): void {
    const { store, sessions } = this.#o;
    const run = store.getRun(runId);
    const output =
      outcome.output && outcome.output.length > MAX_OUTPUT_CHARS
        ? `${outcome.output.slice(0, MAX_OUTPUT_CHARS)}…`
        : outcome.output;
    if (!run || !store.finishRun(runId, { status: outcome.status, output, error: outcome.error }, now))
      return;
    clearTimeout(this.#timeouts.get(runId));
    this.#timeouts.delete(runId);
    if (run.sessionKey) sessions.reset(run.sessionKey, "manual");
    const job = store.getJob(run.jobId);
    const log = this.#log.child({ jobId: run.jobId, runId, status: outcome.status });
    if (job && (outcome.status === "ok" || outcome.status === "silent")) store.recordSuccess(job.id);
    if (job && (outcome.status === "failed" || outcome.status === "timeout")) {
      const period = periodAt(job.schedule, run.tickAt);
      const { failures, report } = store.recordFailure(job.id, (n) => skipTicksAfter(n, period));
      log.warn({ failures, error: outcome.error }, "cron run failed");
      if (report) {
        const why = outcome.userMessage ?? outcome.error ?? "it failed";
        this.#notify(
          job,
          `⚠️ Scheduled job "${job.name}" (${job.id}) failed: ${why}\nIt stays scheduled and backs off while it keeps failing; I won't report further failures until it has worked again.`,
        );
      }
    } else {
      log.info(
        { durationMs: run.startedAt === undefined ? undefined : now - run.startedAt },
        "cron run finished",
      );
    }
    this.#pump(now);
  }

  /** Now: the clock, or the latest time `tick()` was told had come if that is later. */
  #now(): number {
    return Math.max(this.#o.now(), this.#cameAt);
  }

  #limitOf(run: CronRun): number {
    return this.#o.store.getJob(run.jobId)?.timeoutMs ?? this.#o.runTimeoutMs;
  }

  #armTimeout(runId: string, deadline: number, now: number): void {
    clearTimeout(this.#timeouts.get(runId));
    // setTimeout holds at most ~24.8 days; a longer wait is re-armed when it fires.
    const timer = setTimeout(
      () => {
        this.#timeouts.delete(runId);
        const at = this.#now();
        if (at >= deadline) this.#guard("expire run", () => this.#expire(runId, at));
        else this.#armTimeout(runId, deadline, at);
      },
      Math.min(2 ** 31 - 1, Math.max(0, deadline - now)),
    );
    timer.unref?.();
    this.#timeouts.set(runId, timer);
  }

  /** Cancels a run past its time limit (its turn is cancelled: no reply is delivered). */
  #expire(runId: string, now: number): void {
    const run = this.#o.store.getRun(runId);
    if (run?.status !== "running" || !run.sessionKey) return;
    this.#o.control.cancel(run.sessionKey, "the run time limit was reached");
    this.#finish(
      runId,
      { status: "timeout", error: `stopped after ${formatDuration(this.#limitOf(run))}, its time limit` },
      now,
    );
  }

  #onDelivery(
    turnId: string | undefined,
    chat: ChatRef,
    outcome: "delivered" | "failed",
    error?: string,
  ): void {
    if (!turnId || chat.platform === "cron") return;
    // Most deliveries are chat replies: a key lookup in the (small) runs table rules them out before the
    // turn's whole record is read.
    if (!this.#o.store.getRun(turnId)) return;
    const cron = this.#o.turns.get(turnId)?.cron;
    if (!cron) return;
    const job = this.#o.store.getJob(cron.jobId);
    if (!job) return;
    const spec = cron.targets.find((t) => formatChat(t.chat) === formatChat(chat))?.spec ?? formatChat(chat);
    if (outcome === "delivered") this.#o.store.markTargetReported(job.id, spec, false);
    else
      this.#reportUnreachable(
        job,
        spec,
        `delivering to ${formatChat(chat)} failed${error ? ` (${error})` : ""}`,
      );
  }

  /** Tells the job's origin once that a target can't be reached (until it works again); logs it. */
  #reportUnreachable(job: CronJob, spec: string, reason: string): void {
    if (!this.#o.store.markTargetReported(job.id, spec, true)) {
      this.#log.debug({ jobId: job.id, target: spec, reason }, "cron target still unreachable");
      return;
    }
    this.#log.warn({ jobId: job.id, target: spec, reason }, "cron target unreachable");
    const text = `⚠️ Scheduled job "${job.name}" (${job.id}) can't deliver to ${spec}: ${reason}. I'll mention this once; the job keeps running.`;
    if (job.origin && spec !== "origin") this.#send([job.origin], text);
  }

  /** Sends a notice about a job to its origin, or to its targets when it has none (made on the CLI). */
  #notify(job: CronJob, text: string): void {
    const chats = job.origin
      ? [job.origin]
      : resolveTargets(job.deliver, undefined, this.#targetEnv()).chats.map((t) => t.chat);
    if (chats.length === 0) this.#log.warn({ jobId: job.id }, "no chat to report to; see herald cron list");
    this.#send(chats, text);
  }

  #send(chats: ChatRef[], text: string): void {
    for (const chat of chats) {
      if (this.#targetEnv().isRunning(chat.platform)) this.#o.control.notify(chat, text);
    }
  }

  /**
   * The targets the job's maker may deliver to (the owner policy, asked again at each run: a job saved
   * before its maker lost owner rights, or by an older Herald, delivers to its origin only). A job
   * added on the command line is the owner's.
   */
  #permitted(job: CronJob, resolved: ResolvedTargets): ResolvedTargets {
    const rule = this.#rule;
    if (!rule || !job.origin) return resolved;
    const maker = { chat: job.origin, userId: job.createdBy ?? "" };
    const out: ResolvedTargets = { chats: [], unreachable: [...resolved.unreachable] };
    for (const target of resolved.chats) {
      if (rule.mayDeliver(maker, target.chat)) out.chats.push(target);
      else
        out.unreachable.push({
          spec: target.spec,
          reason: "only an owner's job delivers to another chat (this one may deliver to its origin)",
        });
    }
    return out;
  }

  /** The run's toolsets: at most those of its maker's chat, asked again at each run. */
  #toolsetsOf(job: CronJob): string[] {
    const asked = job.toolsets ?? this.#o.defaultToolsets.filter((t) => t !== "cron");
    const { toolsets, dropped } = runToolsets(job, asked, this.#toolsetLimit);
    if (dropped.length && job.toolsets)
      this.#log.warn(
        { jobId: job.id, dropped },
        "cron run without the toolsets its maker's chat does not get",
      );
    return toolsets;
  }

  #targetEnv(): TargetEnvironment {
    const { control, homes } = this.#o;
    return {
      homeChannel: (platform) => homes.get(platform),
      isRunning: (platform) => platform !== "cron" && control.isRunning(platform),
      parseChat: this.#parseChat,
    };
  }

  #knownPlatforms(): Set<string> {
    const names = new Set([...this.#o.platforms(), "api"]);
    names.delete("cron");
    return names;
  }

  /** Runs `fn`, logging instead of throwing (listeners and timers must not throw). */
  #guard<T>(what: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.#warn(`${what} failed`, err);
      return undefined;
    }
  }

  #warn(msg: string, err: unknown): void {
    this.#log.warn({ error: describeError(err) }, msg);
  }
}

/** The fresh session of one run: its own thread of the job's cron chat. */
function sessionPartsOf(job: CronJob, run: CronRun) {
  return {
    chat: { platform: "cron", chatId: job.id, threadId: run.id },
    chatType: "dm" as const,
    userId: job.createdBy ?? "cron",
    // The run is a turn of the job's agent: its key's prefix says so to the turn context and workers.
    agent: job.agent,
  };
}
