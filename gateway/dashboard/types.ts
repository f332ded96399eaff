/**
 * Contracts of the web dashboard: what it reads and changes (ports the composition root fills from the
 * gateway's state, runner, cron service, memory and skills), and its access settings. The dashboard
 * holds no state of its own beyond login sessions and the last hour of turn figures.
 */

import type { CronJobView, CronRun } from "../../scheduler/types.js";
import type { PairingRequest, SearchHit, SessionStore, UsageLedger } from "../../sessions/types.js";
import type { MemoryFiles, MemoryView } from "../../skills/memory/types.js";
import type { SkillFiles } from "../../skills/types.js";

/** Who may open the dashboard and how long a login lasts. */
export interface DashboardAccess {
  /**
   * Secrets a login accepts (the dashboard password, the API server key). Empty: no login exists, and
   * the dashboard answers only on a loopback server to loopback clients.
   */
  secrets: readonly string[];
  /** Whether the HTTP server listens only on this machine (API_SERVER_HOST is loopback). */
  loopbackServer: boolean;
  /** How long a login lasts without use. @defaultValue 12 hours */
  sessionTtlMs?: number | undefined;
}

/** One adapter as the overview shows it. */
export interface AdapterView {
  platform: string;
  state: string;
  detail?: string | undefined;
}

/** The job queue's figures, or why there are none. */
export type QueueView = { waiting: number; active: number; workers: number } | { error: string };

/** A pending approval of a dangerous command, as the approvals page lists it. */
export interface ApprovalView {
  sessionKey: string;
  sessionId: string;
  userId: string;
  command: string;
  ruleDescription: string;
  createdAt: number;
  expiresAt: number;
}

/** Cron jobs with every owner's jobs (the dashboard is the operator's, like `herald cron`). */
export interface CronAdmin {
  /** Jobs with their recent runs, newest run first. */
  list(runsPerJob: number): { job: CronJobView; runs: CronRun[] }[];
  /** Queues a run now; false for an unknown job. */
  runNow(id: string): Promise<boolean>;
  setPaused(id: string, paused: boolean): Promise<boolean>;
  remove(id: string): Promise<boolean>;
}

/** What the dashboard reads and changes. Every member may throw; the dashboard shows the message. */
export interface DashboardSources {
  sessions: SessionStore;
  /** The further agents' names (the default agent is always there); none: no agent filter shown. */
  agents?: readonly string[] | undefined;
  /** How many sessions are active. */
  activeSessions(): number;
  /** Full-text search over all messages, newest first. */
  search(query: string, limit: number): SearchHit[];
  pairing: {
    pending(): PairingRequest[];
    /** Admits the user (and tells them in their chat). */
    approve(platform: string, userId: string): boolean;
    /** Drops the user's request. */
    deny(platform: string, userId: string): boolean;
  };
  /** Ends the active session of a key (the next message starts a fresh one). */
  resetSession(sessionKey: string): boolean;
  adapters(): AdapterView[];
  queue(): Promise<QueueView>;
  approvals?: {
    pending(): ApprovalView[];
    /** Answers as `/approve` or `/deny` in the chat would (the agent's next turn is told). */
    answer(sessionKey: string, approve: boolean): boolean;
  };
  cron?: CronAdmin | undefined;
  /** The owners' memory files (the dashboard's login is the owner's). */
  memory?: MemoryFiles | undefined;
  /** Every other user's own memory files, by folder name (`telegram-300-…`), shown read-only. */
  userMemory?: (() => Promise<{ key: string; views: MemoryView[] }[]>) | undefined;
  skills?: SkillFiles | undefined;
  /**
   * A further agent's skills (`agents[].skills_dir`), by its name (one of `agents`); the skills pages
   * show them with `?agent=<name>`. Absent: only `skills`.
   */
  agentSkills?: ((agent: string) => SkillFiles) | undefined;
  /** Token usage the turns recorded (the usage ledger). */
  usage?: (Pick<UsageLedger, "summary" | "forSession"> & { firstAt(): number | undefined }) | undefined;
  /** The last lines of the gateway's log file; undefined when there is none. */
  logTail?(maxLines: number): { file: string; lines: string[] } | undefined;
}

/** A turn's start or end, as the live updates carry it. */
export type ActivityEvent =
  | { type: "turn-started"; sessionKey: string; platform: string; at: number }
  | {
      type: "turn-finished";
      sessionKey: string;
      sessionId: string;
      platform: string;
      outcome: "ok" | "failed";
      durationMs?: number | undefined;
      error?: string | undefined;
      at: number;
    }
  | { type: "error"; source: string; message: string; at: number };
