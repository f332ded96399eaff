/**
 * The gateway: the `GatewayRunner` and its turn path (inbound steps in one transaction, the turn
 * coordinator, the outbox dispatcher), access and the owner policy, the command registry and the core
 * commands, crashed turns, the state file's maintenance and the gateway's metrics. Its surfaces are
 * units of their own: `http/`, `dashboard/`, `mcp-server/`.
 */
export {
  type AccessDecision,
  AccessPolicy,
  type PrincipalResolver,
  pairingText,
  type UserIdNormalisers,
} from "./access.js";
export {
  type AgentCommandsOptions,
  type AgentReason,
  type AgentRoute,
  AgentRouter,
  type AgentRouterOptions,
  agentCommands,
  DEFAULT_AGENT,
} from "./agent-routes.js";
export { CommandRegistry } from "./commands.js";
export { crashedTurnMessage, MAX_CRASHED_RUNS } from "./crashed-turns.js";
export { decideInbound, inboundSteps, isAddressed, isWellFormed } from "./inbound.js";
export { filesInUse, type MaintenanceOptions, pruneState, startMaintenance } from "./maintenance.js";
export { createGatewayMetrics, queueStats } from "./metrics.js";
export { GatewayRunner, type GatewayRunnerOptions, turnIdFor } from "./runner.js";
export { type CompressReport, type CompressSession, sessionCommands } from "./session-commands.js";
export type * from "./types.js";
