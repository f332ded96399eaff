/**
 * Memory, skills and the learning loop on the gateway: the stores under `HERALD_HOME`, the system
 * prompt with its per-session snapshot, `/skills` and `/<skill>`, the background review after busy
 * turns and at session end, and the optional weekly curator. Memory is by whom a turn acts for (the
 * owner policy): the owners share one pair of files, every other user has their own, and a turn (its
 * prompt, its `memory` calls, the review after it) reads and writes only those of whom it acts for.
 */
import { join } from "node:path";
import type { Caller, Principal } from "../../core/access.js";
import { agentOfKey } from "../../core/chat.js";
import type { CommandModule } from "../../core/commands.js";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { GatewayEvents, ModelUsage, TurnOrigin, TurnRecord, TurnResult } from "../../core/turn.js";
import type { ChatType, GroupSessionMode, KeyValueStore } from "../../core/types.js";
import type { SessionStore } from "../../sessions/index.js";
import {
  curateSkills,
  type FileSkillStore,
  type RemoteSkillsPort,
  skillCommands,
  skillsPromptSection,
} from "../../skills/index.js";
import { type MemoryScope, ScopedMemoryStore, userMemoryKey } from "../../skills/memory/index.js";
import type { ModelClient } from "../model-client.js";
import { PromptBuilder } from "../prompt-builder.js";
import { LearningReviewer, type ReviewConfig } from "../review.js";
import type { ToolRegistry } from "../tool-registry.js";
import type { StateClient } from "../types.js";
import { AgentSkillStores, ownersSkills } from "./skills.js";

const HOUR_MS = 3_600_000;

/** The StateClient members the memory and skill tools use, both served here. */
export type LearningStateApis = { [K in "memory" | "skills"]-?: NonNullable<StateClient[K]> };
const WEEK_MS = 7 * 24 * HOUR_MS;

export interface Learning {
  /** Memory by caller; `memory.owners` is the owners' pair of files. */
  memory: ScopedMemoryStore;
  /** The shared skills folder's store (the default agent's). */
  skills: FileSkillStore;
  /** Each agent's skill store. */
  agentSkills: AgentSkillStores;
  /** The background reviewer; undefined when `learning.enabled` is false. */
  reviewer: LearningReviewer | undefined;
  /** The StateClient members the memory and skill tools use. */
  stateApis: LearningStateApis;
  /** The runner's `systemPrompt` option: memory and the skills index as of the session's start. */
  systemPrompt: (turn: TurnRecord, chatType: ChatType) => string;
  /** Drops a session's prompt snapshot: its next turn takes a new one (/personality). */
  refreshPrompt: (sessionKey: string) => void;
  /** Registers `/skills`, `/<skill>` and the review triggers on the runner. Call once. */
  attach(runner: LearningGateway): void;
  /** Stops the review and the curator schedule (before the state closes). */
  stop(): Promise<void>;
}

/** The owner policy as memory asks it (`AccessPolicy` has this shape). */
export interface MemoryOwnerRule {
  principalOf(caller: Caller): Principal;
  isOwner(platform: string, userId: string): boolean;
  normaliseUserId(platform: string, userId: string): string;
}

/** What learning needs of the gateway's runner (`GatewayRunner` has this shape). */
export interface LearningGateway
  extends GatewayEvents<
    | { type: "turn-finished"; turn: TurnRecord; result: TurnResult }
    | { type: "session-ended"; session: { id: string } }
  > {
  access: MemoryOwnerRule;
  commands: { add(module: CommandModule): unknown };
}

/** The gateway's state as learning uses it (`SqliteState` has this shape). */
export interface LearningState {
  sessions: Pick<SessionStore, "get" | "load">;
  kv(namespace: string): KeyValueStore;
  transaction<T>(fn: () => T): T;
  usage?:
    | {
        record(
          turn: Pick<TurnRecord, "id" | "sessionId" | "userId" | "chat">,
          lines: ModelUsage[],
          now: number,
        ): void;
      }
    | undefined;
}

/** The settings learning reads (`HeraldConfig` has this shape). */
export interface LearningSettings {
  homeDir: string;
  timezone: string;
  agent: { persona?: string | undefined };
  sessions: { groupSessions: GroupSessionMode };
  memory: { memoryChars: number; userChars: number };
  learning: ReviewConfig & { enabled: boolean; curateWeekly: boolean; archiveAfterDays: number };
  auxiliary: { review?: string | undefined };
  /** The skill indexes `skills_list` (remote) searches. */
  skills: { sources: readonly string[] };
}

/** What learning is built with. */
export interface LearningPorts {
  state: LearningState;
  logger: Logger;
  /** The review's model client. */
  model: ModelClient;
  /** The review's tools (`memory` and the skill tools). */
  reviewTools: ToolRegistry;
  /** The review's StateClient over the memory and skill members built here. */
  stateClient: (members: LearningStateApis) => StateClient;
  /** Downloads remote skills and skill indexes (the guarded fetch); rejects saying why not. */
  download: RemoteSkillsPort["download"];
  /** Each platform's prompt hint, by name. */
  hints: Readonly<Record<string, string>>;
  /** A further agent's memory folder by name (`agents:`); undefined: none. @defaultValue no further agents */
  agentMemoryDir?: ((agent: string) => string | undefined) | undefined;
  /** Each further agent's skills folder by name (`agents[].skills_dir`); others use the shared one. */
  agentSkillsDirs?: ReadonlyMap<string, string> | undefined;
  /** SOUL.md, the chat's personality and AGENTS.md, snapshotted with memory (`agent/persona`). */
  persona?:
    | { identity(turn: TurnRecord): string | undefined; sections(turn: TurnRecord): string[] }
    | undefined;
}

/** Builds the stores, the prompt builder and (when enabled) the reviewer. */
export function createLearning(config: LearningSettings, ports: LearningPorts): Learning {
  const { state, logger } = ports;
  const log = logger.child({ component: "learning" });
  // Set by attach(), before any turn runs.
  let policy: MemoryOwnerRule | undefined;
  const scopeOf = (caller: Caller): MemoryScope =>
    policy ? memoryScope(policy, caller) : { kind: "none", reason: "memory is not ready yet" };
  const memory = new ScopedMemoryStore({
    dir: join(config.homeDir, "memories"),
    memoryChars: config.memory.memoryChars,
    userChars: config.memory.userChars,
    logger: log,
    scopeOf,
    agentDir: ports.agentMemoryDir,
  });
  const agentSkills = new AgentSkillStores({
    homeDir: config.homeDir,
    logger: log,
    agentDirs: ports.agentSkillsDirs,
  });
  const skills = agentSkills.shared;
  const prompts = new PromptBuilder({
    persona: config.agent.persona,
    hints: ports.hints,
    groupSessions: config.sessions.groupSessions,
    timezone: config.timezone,
    snapshots: state.kv("prompt-snapshots"),
    logger: log,
    scope: (turn) => scopeKey(scopeOf(callerOf(turn))),
    sections: (turn) => {
      const index = skillsPromptSection(
        agentSkills.ofKey(turn.sessionKey).catalog().skills,
        turn.chat.platform,
      );
      return [
        ...(ports.persona?.sections(turn) ?? []),
        ...memory.promptSections(callerOf(turn)),
        ...(index ? [index] : []),
      ];
    },
    identity: ports.persona?.identity,
  });
  const remote: RemoteSkillsPort = { indexes: config.skills.sources, download: ports.download };
  const stateApis = { memory, skills: ownersSkills(agentSkills, scopeOf, remote) };
  const reviewer = config.learning.enabled
    ? createReviewer(config, ports, { memory, skills: agentSkills, stateApis })
    : undefined;
  const curator = createCurator(config, { state, skills: agentSkills, log });
  return {
    memory,
    skills,
    agentSkills,
    reviewer,
    stateApis,
    systemPrompt: prompts.build,
    refreshPrompt: (sessionKey) => prompts.refresh(sessionKey),
    attach(runner) {
      policy = runner.access;
      runner.commands.add(skillCommands((ctx) => agentSkills.ofKey(ctx.sessionKey), log, remote));
      if (reviewer) attachReview(config, { runner, reviewer, state, scopeOf, log });
      if (config.learning.curateWeekly) curator.start();
    },
    async stop() {
      await Promise.all([reviewer?.stop(), curator.stop()]);
    },
  };
}

/** The caller of a turn (or its origin): its chat, its user and the agent its session key names. */
const callerOf = (turn: { chat: Caller["chat"]; userId: string; sessionKey?: string }): Caller => {
  const agent = turn.sessionKey ? agentOfKey(turn.sessionKey) : undefined;
  return agent ? { chat: turn.chat, userId: turn.userId, agent } : { chat: turn.chat, userId: turn.userId };
};

/** The background reviewer: memory and skill tools on the review's model, its tokens in the session's usage. */
function createReviewer(
  config: LearningSettings,
  ports: LearningPorts,
  parts: {
    memory: ScopedMemoryStore;
    skills: AgentSkillStores;
    stateApis: LearningStateApis;
  },
): LearningReviewer {
  const { state } = ports;
  const { memory, skills } = parts;
  return new LearningReviewer({
    // The review's model by role: auxiliary.review, else learning.model, else the default.
    config: { ...config.learning, model: config.auxiliary.review ?? config.learning.model },
    model: ports.model,
    tools: ports.reviewTools,
    state: ports.stateClient(parts.stateApis),
    logger: ports.logger,
    homeDir: config.homeDir,
    // A review's tokens count toward the reviewed session's usage (`/usage`, `/usage all`).
    onUsage: (reviewId, origin, usage) => {
      if (!state.usage || !usage.byModel?.length) return;
      const turn = { id: reviewId, sessionId: origin.sessionId, userId: origin.userId, chat: origin.chat };
      state.transaction(() => state.usage?.record(turn, usage.byModel ?? [], Date.now()));
    },
    context: (origin) => {
      const list = skills
        .ofKey(origin.sessionKey)
        .catalog()
        .skills.map((s) => `- ${s.meta.name} (${s.source}): ${s.meta.description}`);
      return [...memory.promptSections(callerOf(origin)), `## Existing skills\n${list.join("\n") || "none"}`];
    },
  });
}

/** Runs `fn`, logging instead of throwing (event handlers and timers must not throw). */
function guarded(log: Logger, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.error({ error: describeError(err) }, `${what} failed`);
  }
}

/** Reviews after busy turns (not a scheduled job's: it repeats the same prompt) and at session end. */
function attachReview(
  config: LearningSettings,
  parts: {
    runner: LearningGateway;
    reviewer: LearningReviewer;
    state: LearningState;
    scopeOf: (caller: Caller) => MemoryScope;
    log: Logger;
  },
): void {
  const { runner, reviewer, state, log } = parts;
  const load = (sessionId: string) => () => state.sessions.load(sessionId).map((m) => m.message);
  /**
   * Whether a review of `origin`'s session may write where it would: always, except into the owners'
   * memory from a conversation several people share (a shared group session, a group's thread), whose
   * transcript holds other people's words. There an owner saves with the `memory` tool, deliberately.
   */
  const mayReview = (origin: TurnOrigin): boolean => {
    const shared =
      origin.chatType === "group" && (config.sessions.groupSessions === "shared" || !!origin.chat.threadId);
    if (!shared || parts.scopeOf(callerOf(origin)).kind !== "owners") return true;
    log.debug({ sessionId: origin.sessionId }, "no learning review of a shared conversation for the owners");
    return false;
  };
  runner.on("turn-finished", ({ turn, result }) =>
    guarded(log, "learning review trigger", () => {
      // A scheduled job repeats the same prompt each run: reviewing every run would cost much and teach little.
      if (turn.source === "cron" || turn.source === "webhook") return;
      const chatType = turn.inbound?.chatType ?? state.sessions.get(turn.sessionId)?.chatType ?? "dm";
      const origin = originOf(turn, chatType);
      if (mayReview(origin)) reviewer.afterTurn(origin, result, load(turn.sessionId));
    }),
  );
  runner.on("session-ended", ({ session: ended }) =>
    guarded(log, "learning review trigger", () => {
      const session = state.sessions.get(ended.id);
      if (!session) return;
      const origin: TurnOrigin = {
        sessionId: session.id,
        sessionKey: session.key,
        chat: session.chat,
        chatType: session.chatType,
        userId: session.userId,
      };
      if (mayReview(origin)) reviewer.afterSession(origin, load(session.id));
    }),
  );
}

/** The weekly skills curator: checked a minute after start and hourly, run when a week has passed. */
function createCurator(
  config: LearningSettings,
  parts: { state: LearningState; skills: AgentSkillStores; log: Logger },
): { start(): void; stop(): Promise<void> } {
  const { state, skills, log } = parts;
  let timers: NodeJS.Timeout[] = [];
  let curating: Promise<void> | undefined;
  const curateIfDue = () => {
    const kv = state.kv("learning");
    if (curating || Date.now() - Number(kv.get("curator-last-run") ?? 0) < WEEK_MS) return;
    kv.set("curator-last-run", String(Date.now()));
    // Each agent's folder in turn (one after the other: each report is named by its time).
    curating = (async () => {
      for (const store of skills.all()) {
        const r = await curateSkills({
          store,
          reportDir: join(config.homeDir, "logs", "curator"),
          archiveAfterDays: config.learning.archiveAfterDays,
        });
        log.info(
          { report: r.reportPath, merged: r.merged.length, archived: r.archived.length },
          "skills curated",
        );
      }
    })()
      .catch((err: unknown) => log.error({ error: describeError(err) }, "skills curator failed"))
      .finally(() => {
        curating = undefined;
      });
  };
  return {
    start() {
      const check = () => guarded(log, "skills curator schedule", curateIfDue);
      timers = [setTimeout(check, 60_000), setInterval(check, HOUR_MS)];
      for (const timer of timers) timer.unref();
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      timers = [];
      await curating;
    },
  };
}

function originOf(turn: TurnRecord, chatType: ChatType): TurnOrigin {
  return {
    sessionId: turn.sessionId,
    sessionKey: turn.sessionKey,
    chat: turn.chat,
    chatType,
    userId: turn.userId,
    userName: turn.inbound?.sender.name,
  };
}

/**
 * Whose memory `caller` reaches: the owners' shared files for an owner (or the operator's channels), a
 * user's own for anyone else (a cron run: its job's maker's), none for a turn that acts for nobody.
 */
export function memoryScope(policy: MemoryOwnerRule, caller: Caller): MemoryScope {
  const principal = policy.principalOf(caller);
  if (principal === "owner") return { kind: "owners" };
  if (principal === "nobody")
    return {
      kind: "none",
      reason: "this turn has no memory: it acts for nobody (a webhook's input comes from outside).",
    };
  const { platform } = principal.chat;
  if (policy.isOwner(platform, principal.userId)) return { kind: "owners" };
  return { kind: "user", platform, userId: policy.normaliseUserId(platform, principal.userId) };
}

/** The prompt builder's scope of a memory scope: the owners' is the default one. */
function scopeKey(scope: MemoryScope): string {
  if (scope.kind === "owners") return "";
  if (scope.kind === "none") return "none";
  return `user:${userMemoryKey(scope.platform, scope.userId)}`;
}
