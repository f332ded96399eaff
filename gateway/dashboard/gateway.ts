/**
 * The web dashboard on the gateway: its sources are the gateway's state, runner, queue, cron store and
 * service, approvals, memory and skills; its activity is fed from the runner's events. See
 * `server.ts` for the pages and the access rules.
 */
import { join } from "node:path";
import { tailFile } from "../../core/log-reader.js";
import type { Logger } from "../../core/logger.js";
import type { JobQueue } from "../../core/turn.js";
import type { PlatformAdapter } from "../../core/types.js";
import { type CronService, jobView, nextOccurrence, SqliteCronStore } from "../../scheduler/index.js";
import type { SqliteState } from "../../sessions/index.js";
import type { FileSkillStore } from "../../skills/index.js";
import type { ScopedMemoryStore } from "../../skills/memory/index.js";
import { queueStats } from "../metrics.js";
import type { GatewayRunner } from "../runner.js";
import { Activity } from "./activity.js";
import { createDashboard, type Dashboard } from "./server.js";
import type { CronAdmin, DashboardSources } from "./types.js";

/** The settings the dashboard reads (`HeraldConfig` has this shape). */
export interface GatewayDashboardConfig {
  homeDir: string;
  timezone: string;
  dashboard: { enabled: boolean; password?: string | undefined; sessionHours: number };
  apiServer: { key?: string | undefined };
  /** The further agents (`agents:`), whose sessions the sessions page can show apart. */
  agents?: readonly { name: string }[] | undefined;
}

/** What the gateway hands the dashboard. */
export interface GatewayDashboardPorts {
  state: SqliteState;
  runner: GatewayRunner;
  queue: JobQueue;
  cron: CronService;
  /** Pending approvals and the dashboard's answer to one. */
  approvals: NonNullable<DashboardSources["approvals"]>;
  /** Memory by caller and the skill store. */
  learning: {
    memory: ScopedMemoryStore;
    skills: FileSkillStore;
    /** Each agent's skill store by its name (the default agent's: the shared one). */
    agentSkills?: { of(agent: string | undefined): FileSkillStore } | undefined;
  };
  adapters: ReadonlyMap<string, PlatformAdapter>;
  failed: ReadonlyMap<string, string>;
  /** Whether the HTTP server listens only on this machine (API_SERVER_HOST is loopback). */
  loopbackServer: boolean;
  logger: Logger;
}

/**
 * Builds the dashboard and starts following the runner (call before `runner.start()`). Undefined when
 * `dashboard.enabled` is off.
 */
export function createGatewayDashboard(
  config: GatewayDashboardConfig,
  deps: GatewayDashboardPorts,
): Dashboard | undefined {
  const { runner, state } = deps;
  if (!config.dashboard.enabled) return undefined;
  const activity = followRunner(runner);
  const { agentSkills } = deps.learning;
  const secrets = [config.dashboard.password, config.apiServer.key].filter((s): s is string => Boolean(s));
  return createDashboard({
    activity,
    logger: deps.logger,
    access: {
      secrets,
      loopbackServer: deps.loopbackServer,
      sessionTtlMs: config.dashboard.sessionHours * 3_600_000,
    },
    sources: {
      sessions: state.sessions,
      agents: (config.agents ?? []).map((a) => a.name),
      activeSessions: () => state.sessions.countActive(),
      search: (query, limit) => state.sessions.searchNewest(query, limit),
      pairing: {
        pending: () => state.pairing.pending(),
        approve(platform, userId) {
          const request = state.pairing.pending().find((r) => r.platform === platform && r.userId === userId);
          if (!request) return false;
          state.transaction(() => {
            state.pairing.allow(platform, userId);
            runner.control.notify(
              { platform, chatId: request.chatId },
              "You're in: the owner approved your access. Send your message again.",
            );
          });
          return true;
        },
        deny: (platform, userId) => state.pairing.deny(platform, userId),
      },
      resetSession: (key) => runner.control.reset(key),
      adapters() {
        const out = [...deps.adapters].map(([platform, adapter]) => ({
          platform,
          ...(adapter.status?.() ?? { state: "running" }),
        }));
        for (const [platform, detail] of deps.failed) out.push({ platform, state: "failed", detail });
        return out;
      },
      queue: () => queueStats(deps.queue),
      approvals: {
        pending: () => deps.approvals.pending(),
        answer: (key, approve) => deps.approvals.answer(key, approve),
      },
      cron: cronAdmin(config, state, deps.cron),
      memory: deps.learning.memory.owners,
      userMemory: () =>
        Promise.all(
          deps.learning.memory.users().map(async ({ key, files }) => ({
            key,
            views: await Promise.all([files.read("memory"), files.read("user")]),
          })),
        ),
      skills: deps.learning.skills,
      agentSkills: agentSkills ? (agent) => agentSkills.of(agent) : undefined,
      usage: state.usage,
      logTail: (maxLines) => tailFile(join(config.homeDir, "logs", "herald.log"), maxLines),
    },
  });
}

/** The activity the overview and the live updates show, fed from the runner's events. */
function followRunner(runner: GatewayRunner): Activity {
  const activity = new Activity();
  const startedAt = new Map<string, number>();
  runner.on("turn-started", ({ job }) => {
    startedAt.set(job.turnId, Date.now());
    if (startedAt.size > 10_000) startedAt.delete(startedAt.keys().next().value!);
    activity.record({
      type: "turn-started",
      sessionKey: job.origin.sessionKey,
      platform: job.origin.chat.platform,
      at: Date.now(),
    });
  });
  runner.on("turn-finished", ({ turn, result }) => {
    const t0 = startedAt.get(turn.id);
    startedAt.delete(turn.id);
    activity.record({
      type: "turn-finished",
      sessionKey: turn.sessionKey,
      sessionId: turn.sessionId,
      platform: turn.chat.platform,
      outcome: result.kind,
      durationMs: t0 === undefined ? undefined : Date.now() - t0,
      error: result.kind === "failed" ? result.error : undefined,
      at: Date.now(),
    });
  });
  runner.on("delivery-settled", ({ item, outcome }) => {
    if (outcome === "failed")
      activity.record({
        type: "error",
        source: `delivery to ${item.chat.platform}`,
        message: item.lastError ?? "the platform did not accept the message",
        at: Date.now(),
      });
  });
  return activity;
}

/** Every owner's jobs on the gateway's connection; changes are told to the running service at once. */
function cronAdmin(
  config: Pick<GatewayDashboardConfig, "timezone">,
  state: SqliteState,
  service: CronService,
): CronAdmin {
  const store = SqliteCronStore.on(state.database);
  return {
    list(runsPerJob) {
      return store.listJobs().map((job) => {
        const runs = store.runs(job.id, runsPerJob);
        return { job: jobView(job, runs[0], config.timezone), runs };
      });
    },
    async runNow(id) {
      if (!store.getJob(id)) return false;
      const now = Date.now();
      store.addRun(id, now, "manual", now);
      await service.sync();
      return true;
    },
    async setPaused(id, paused) {
      const job = store.getJob(id);
      if (!job) return false;
      const now = Date.now();
      // As the cronjob tool does: resuming starts from now, ticks missed while paused are not runs.
      store.setPaused(id, paused, paused ? job.nextRunAt : nextOccurrence(job.schedule, now), now);
      await service.sync();
      return true;
    },
    async remove(id) {
      const removed = store.deleteJob(id);
      await service.sync();
      return removed;
    },
  };
}
