/**
 * Delegation on the gateway: the children of `delegate_task` (`DelegationService` on the gateway's
 * state and job queue), `/background`, `/tasks` and `/stop <id>`, and the handlers that end children
 * with their turns.
 */
import type { CommandModule } from "../../core/commands.js";
import type { Logger } from "../../core/logger.js";
import type { GatewayEvents, JobQueue, TurnControl } from "../../core/turn.js";
import type { GroupSessionMode } from "../../core/types.js";
import type { SqliteState } from "../../sessions/index.js";
import { backgroundCommands } from "./background.js";
import { DelegationService } from "./service.js";
import type { DelegateStateApi } from "./state.js";

/** The gateway's state as delegation uses it. */
export type DelegationState = Pick<
  SqliteState,
  "database" | "transaction" | "kv" | "turns" | "sessions" | "usage"
>;

/** What delegation needs of the gateway's runner (`GatewayRunner` has this shape). */
export interface DelegationGateway extends GatewayEvents<{ type: "turn-finished"; turn: { id: string } }> {
  control: TurnControl;
  commands: { add(module: CommandModule): unknown };
  /** Adds what /stop also stops: asked inside the inbound transaction, returns how many it stopped. */
  addStopper(stopper: (sessionKey: string) => number): unknown;
  /** Adds an answer to `/stop <id>`; the first answer wins. */
  addTaskStopper(stopper: (id: string, sessionKey: string) => string | undefined): unknown;
}

/** The settings delegation reads (`HeraldConfig` has this shape). */
export interface DelegationConfig {
  delegation: { maxDepth: number; maxParallel: number; maxIterations: number; timeoutS: number };
  sessions: { groupSessions: GroupSessionMode };
}

/** What {@link createDelegation} gives the gateway. */
export interface Delegation {
  service: DelegationService;
  /** The StateClient member `delegate_task` uses. */
  stateApi: DelegateStateApi;
  /**
   * Runs again the children a previous process left open. Call after `runner.start()`: a parent turn
   * failed there for crashing the process twice takes its children with it, rather than have them
   * crash the process again.
   */
  resume(): void;
  /** Unsubscribes from the queue and clears the timers. */
  close(): void;
}

/** Builds delegation on the gateway (registers the commands and its runner hooks at once). */
export function createDelegation(
  config: DelegationConfig,
  ports: { gateway: DelegationGateway; state: DelegationState; queue: JobQueue; logger: Logger },
): Delegation {
  const { gateway, state, queue, logger } = ports;
  const transaction = <T>(fn: () => T): T => state.transaction(fn);
  const { delegation } = config;
  const service = new DelegationService({
    db: state.database,
    queue,
    logger,
    transaction,
    notify: (chat, text, buttons) => gateway.control.notify(chat, text, { buttons }),
    recordUsage: (job, lines) => {
      const { origin } = job;
      const turn = { id: job.turnId, sessionId: origin.sessionId, userId: origin.userId, chat: origin.chat };
      state.usage.record(turn, lines, Date.now());
    },
    isTurnOpen: (id) => {
      const turn = state.turns.get(id);
      return turn ? turn.status === "pending" || turn.status === "running" : undefined;
    },
    settings: {
      maxDepth: delegation.maxDepth,
      maxParallel: delegation.maxParallel,
      maxIterations: delegation.maxIterations,
      timeoutMs: delegation.timeoutS * 1000,
    },
  });
  const unsubscribe = queue.subscribe(service.onQueueEvent);
  gateway.addStopper((key) => service.cancelSession(key));
  gateway.on("turn-finished", ({ turn }) => service.cancelParent(turn.id));
  const background = backgroundCommands({
    control: gateway.control,
    kv: state.kv("background"),
    groupSessions: config.sessions.groupSessions,
    turn: (id) => state.turns.get(id),
    openSession: (parts, now) => {
      const { session } = state.sessions.open(parts, { mode: "none", idleMinutes: 1440, atHour: 4 }, now);
      return { id: session.id, key: session.key };
    },
  });
  gateway.commands.add(background.module);
  gateway.addTaskStopper(background.stopTask);
  return {
    service,
    stateApi: service,
    resume: () => service.recover(),
    close() {
      unsubscribe();
      service.close();
    },
  };
}
