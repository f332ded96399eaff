/**
 * The agent: the loop (model ⇄ tools), the model client on the configured providers, compression, the
 * tool registry, tool declarations (implementations imported on first call) and lazy toolsets, the
 * worker's turn handler, the `StateClient` (in-process or over the gateway's state API), the learning
 * reviewer, and `/compress`. Subfolders are units of their own, each with its index: `queue/`,
 * `providers/`, `exec/` (with `approvals/`), `delegate/`, `plugins/` (with `hooks/`), `persona/`,
 * `learning/` (memory, skills and the review on the gateway), `documents/`, `tools/<name>/`.
 */

export { estimateTokens } from "./compression.js";
export { createCatalog, createConfiguredModelClient, type ModelSettings } from "./configured-model.js";
export { approvalStateMethods } from "./held-calls.js";
export { buildHttpStateClient, type HttpStateClientOptions, probeGateway } from "./http-state-client.js";
export {
  createModelClient,
  legacyProvider,
  type ModelClient,
  type ModelClientConfig,
} from "./model-client.js";
export { DEFAULT_MODEL_BASE_URL, modelConfigProblem } from "./model-config.js";
export { summarizeArguments } from "./run-tool.js";
export {
  createSessionCompressor,
  type SessionCompression,
  type SessionCompressorConfig,
  type SessionCompressorPorts,
} from "./session-compressor.js";
export {
  agentStateMethods,
  callerSchema,
  chatMessageSchema,
  chatRefSchema,
  STATE_API_PATH,
  type StateApiErrorBody,
  type StateMember,
  type StateMethodName,
  type StateMethodTable,
  splitStateMethod,
  toolCallSchema,
} from "./state-methods.js";
export {
  type DeclaredTool,
  declareTool,
  runsFrom,
  type ToolDeclaration,
  type ToolExecute,
  type ToolRun,
} from "./tool-declaration.js";
export { defineTool, ToolRegistry, type UnavailableToolset } from "./tool-registry.js";
export type * from "./types.js";
export { addSpokenReply, type SpeakReply } from "./voice-reply.js";
export { createTurnHandler, type TurnHandlerDeps } from "./worker.js";
