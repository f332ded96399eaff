/**
 * The agent's tools, in one explicit list: each tool (or toolset) lives in its folder under
 * `agent/tools/`, declared in its `declaration.ts` (the implementation loads on the tool's first
 * call); this file registers them and builds those that need the process's parts (the
 * execution backend, workspaces, the MCP servers). Toolsets: "core" (`session_search`, `clarify`,
 * `todo`), "cron" (`cronjob`), "memory" (`memory`; `memory_provider_query` with a provider), "skills" (`skills_list`, `skill_view`,
 * `skill_manage`), "delegate", "tasks" (`task_board`), "terminal" (`terminal`, `process`; only where the
 * configured execution backend is available), "files" (`read_file`, `write_file`, `patch`,
 * `search_files`, in the same workspaces), "web", "browser" (where Chromium is installed), "messaging",
 * "vision", "image", "code" (`execute_code`), "voice", "ha" (Home Assistant, when configured), and one
 * per MCP server.
 */
import { join } from "node:path";
import {
  type BackendName,
  type BusyWorkspaces,
  copyAttachments,
  type Execution,
  type ExecutionBackend,
  type WorkspaceManager,
} from "../agent/exec/index.js";
import { type SpeakReply, type Tool, ToolRegistry, type UnavailableToolset } from "../agent/index.js";
import { createBrowserTools } from "../agent/tools/browser/index.js";
import {
  type Checkpointer,
  createCheckpointer,
  removeCheckpoints,
} from "../agent/tools/checkpoints/index.js";
import { CODE_BACKENDS, executeCodeTool } from "../agent/tools/code/declaration.js";
import type { ExecuteCodeDeps } from "../agent/tools/code/index.js";
import { fileTools } from "../agent/tools/files/declaration.js";
import { createHaTools } from "../agent/tools/ha/index.js";
import { createImageTool } from "../agent/tools/image/index.js";
import {
  createMcpClient,
  type McpManager,
  type McpToolCacheApi,
  mcpWorkspaceFiles,
} from "../agent/tools/mcp/index.js";
import { memoryProviderTools } from "../agent/tools/memory-providers/index.js";
import { sendMessageTool, workspaceExporter } from "../agent/tools/messaging/index.js";
import { terminalTools } from "../agent/tools/terminal/index.js";
import { createVisionTool } from "../agent/tools/vision/index.js";
import { createSpeechTools, createTranscriber } from "../agent/tools/voice/index.js";
import { createWebTools } from "../agent/tools/web/gateway.js";
import type { Logger } from "../core/logger.js";
import type { TurnJob } from "../core/turn.js";
import type { InboundAttachment } from "../core/types.js";
import {
  type AgentExecutions,
  AgentWorkspaceAccess,
  allProcesses,
  backendOfSession,
  executionOf,
  type MissingBackend,
  openAgentExecutions,
  perAgentTools,
} from "./agent-exec.js";
import type { HeraldConfig } from "./config.js";
import { builtinTools, createToolRegistry } from "./tool-registry.js";

export { builtinTools, createToolRegistry, toolsetSummaries } from "./tool-registry.js";

/**
 * `execute_code` where the backend's commands reach this host's sockets (sandbox, local); elsewhere the
 * toolset is listed unavailable.
 */
function codeTools(
  config: HeraldConfig,
  ports: Pick<ExecuteCodeDeps, "backend" | "workspaces" | "quota"> & {
    unavailable: UnavailableToolset[];
    registry: () => ToolRegistry;
  },
): Tool[] {
  const { backend, unavailable } = ports;
  if (!CODE_BACKENDS.includes(backend.name)) {
    unavailable.push({
      toolset: "code",
      missing: `execute_code: commands of the ${backend.name} backend cannot reach this host's tool socket`,
      fix: "use exec.backend: sandbox (or local) for execute_code",
    });
    return [];
  }
  return [
    executeCodeTool({
      ...ports,
      toolsFor: (toolsets) => ports.registry().forToolsets(toolsets),
      timeoutS: config.code.timeoutS,
      maxToolCalls: config.code.maxToolCalls,
      maxOutputChars: config.code.maxOutputChars,
    }),
  ];
}

/** The agent's tools of one process (gateway or worker), with what they hold open. */
export interface AgentTools {
  registry: ToolRegistry;
  /** Background processes of the terminal tools (every agent's backend); undefined when they are off. */
  processes: BusyWorkspaces | undefined;
  /** Every agent's workspaces, each under its agent's root. */
  workspaces: WorkspaceManager;
  /** The default agent's execution backend, when available here. */
  backend?: ExecutionBackend | undefined;
  /** The backend of a session key's agent, or what it misses here (plugins' `exec` runs on it). */
  backendFor(sessionKey: string): ExecutionBackend | MissingBackend;
  /** Whether any agent's backend is available here. */
  anyBackend: boolean;
  /** Every agent's backend available here (pruned workspaces are released on each). */
  backends: ExecutionBackend[];
  /** The executions of every agent's backend (the hand-over goes through each). */
  executions: AgentExecutions;
  /**
   * Copies a turn's attachments into its workspace (`attachments/`) so the tools and commands reach
   * them; returns where the model finds each.
   */
  stageAttachments: ((job: TurnJob) => Promise<ReadonlyMap<string, string>>) | undefined;
  /** Speech to text for voice notes, when `voice.stt` is configured. */
  transcribe: ((attachment: InboundAttachment, signal?: AbortSignal) => Promise<string>) | undefined;
  /** Spoken replies for chats with `/voice on`, when `voice.tts` is configured. */
  speakReply: SpeakReply | undefined;
  /**
   * The MCP servers of `mcp_servers:` (none configured: empty). Not started: the process calls
   * `mcp.start()` once it serves (the servers' start-up then does not delay its own).
   */
  mcp: McpManager;
  /** Why a toolset is off here (doctor, the start log), e.g. bubblewrap missing. */
  unavailable: UnavailableToolset[];
  /** Deletes the checkpoints of a workspace housekeeping pruned. May throw (the folder not removable). */
  workspacePruned(dir: string): Promise<void>;
  /** The checkpoint before a turn's first change of its workspace (`ToolRunDeps.beforeChange`). */
  beforeChange: ((job: TurnJob, note: (line: string) => void) => Promise<void>) | undefined;
  /**
   * A session ended: its background processes are killed, its workspace's file helper ended, its
   * browser context closed (only the context `sessionId` used, when given: the next session of the key
   * may have opened its own already).
   */
  endSession(sessionKey: string, sessionId?: string): Promise<void>;
  /** Kills background processes and closes the backend. */
  close(): Promise<void>;
}

/**
 * The terminal, file, code and checkpoint tools of every agent's backend, one tool per name that runs
 * each call on its agent's backend (pushed onto `parts.tools`); returns each available backend's
 * checkpoint before a turn's first change. A backend not available here is listed in `unavailable`.
 */
function agentExecTools(
  config: HeraldConfig,
  executions: AgentExecutions,
  parts: {
    tools: Tool[];
    unavailable: UnavailableToolset[];
    logger: Logger;
    registry: () => ToolRegistry;
  },
): Map<BackendName, NonNullable<Checkpointer["beforeChange"]>> {
  const toolsOf = new Map<BackendName, Tool[]>();
  const checkpoints = new Map<BackendName, NonNullable<Checkpointer["beforeChange"]>>();
  for (const [name, exec] of executions.byBackend) {
    if (!("backend" in exec)) {
      const agents = name === executions.defaultBackend ? "" : ` (agents whose exec_backend is ${name})`;
      parts.unavailable.push({ toolset: "terminal", missing: `${exec.missing}${agents}`, fix: exec.fix });
      continue;
    }
    const tools: Tool[] = [];
    const checkpointer = execTools(config, exec, { ...parts, tools, workspaces: executions.workspaces });
    toolsOf.set(name, tools);
    checkpoints.set(name, checkpointer.beforeChange);
  }
  parts.tools.push(...perAgentTools(executions, toolsOf));
  return checkpoints;
}

/** The terminal, file, code and checkpoint tools on an available backend (pushed onto `parts.tools`). */
function execTools(
  config: HeraldConfig,
  exec: Execution,
  parts: {
    tools: Tool[];
    workspaces: WorkspaceManager;
    unavailable: UnavailableToolset[];
    logger: Logger;
    registry: () => ToolRegistry;
  },
): Checkpointer {
  const { tools, workspaces, unavailable, logger, registry } = parts;
  const { maxTimeoutS, dangerousCommands } = config.exec;
  const { backend, processes, quota, virtualRoot, exitNotices, access } = exec;
  tools.push(
    ...terminalTools({
      backend,
      workspaces,
      processes,
      quota,
      maxTimeoutS,
      dangerous: dangerousCommands,
      virtualRoot,
      exitNotices,
    }),
    ...fileTools({ access, backend }),
  );
  tools.push(...codeTools(config, { backend, workspaces, quota, unavailable, registry }));
  const checkpointer = createCheckpointer(config.checkpoints, {
    workspaces,
    backend: backend.name,
    homeDir: config.homeDir,
    logger,
  });
  tools.push(...checkpointer.tools);
  if (dangerousCommands === "off")
    logger.warn({}, "dangerous commands run without approval (exec.dangerous_commands: off)");
  return checkpointer;
}

/** The web, messaging, vision, image, browser, voice, Home Assistant and memory provider tools. */
async function senseTools(
  config: HeraldConfig,
  parts: { tools: Tool[]; access: AgentWorkspaceAccess; logger: Logger; unavailable: UnavailableToolset[] },
) {
  const { tools, access, logger, unavailable } = parts;
  const web = createWebTools(config, { logger, unavailable });
  const browser = createBrowserTools(config, { access, logger, unavailable });
  const speech = createSpeechTools(config, { logger, unavailable });
  const ha = await createHaTools(config, { logger });
  tools.push(
    ...web.tools,
    sendMessageTool.with({ exportFile: workspaceExporter(access, join(config.homeDir, "cache")) }),
    createVisionTool(config, { access, unavailable }),
    createImageTool(config, { access, unavailable }),
    ...browser.tools,
    ...speech.tools,
    ...ha.tools,
    ...memoryProviderTools(config.memory.providers, config.agents),
  );
  return { web, browser, speech, ha };
}

/**
 * Every tool this process can offer. The terminal tools come only where the configured backend is
 * available: a missing bubblewrap turns them off (and says how to install it), never falls back to
 * running commands on the host.
 */
export async function createAgentTools(
  config: HeraldConfig,
  logger: Logger,
  options: { worker?: string | undefined; mcpToolCache?: McpToolCacheApi | undefined } = {},
): Promise<AgentTools> {
  const tools: Tool[] = [...builtinTools];
  // execute_code's library lists the turn's tools: the registry, once built below.
  let registry = new ToolRegistry();
  const unavailable: UnavailableToolset[] = [];
  const executions = await openAgentExecutions(config, logger, options.worker);
  const { workspaces } = executions;
  // Checkpoints need the commands' workspace on this host: only with an available backend.
  const checkpointers = agentExecTools(config, executions, {
    tools,
    unavailable,
    logger,
    registry: () => registry,
  });
  // Without the terminal tools (no command runs in any workspace) the files are this host's; attachments
  // still go to the workspace: vision_analyze and send_message read them there, and only there (never
  // another session's files in the shared cache).
  const access = new AgentWorkspaceAccess(executions);
  // Files MCP tools return: into the session's workspace where the file tools are on, else the cache.
  const mcpFiles = executions.available().length ? mcpWorkspaceFiles(access) : undefined;
  const { web, browser, speech, ha } = await senseTools(config, { tools, access, logger, unavailable });
  registry = createToolRegistry(tools);
  const mcp = createMcpClient(config, {
    registry,
    logger,
    files: mcpFiles,
    toolCache: options.mcpToolCache,
  });
  const first = executionOf(executions, "");
  const backend = "backend" in first ? first.backend : undefined;
  const processes = executions.available().length ? allProcesses(executions) : undefined;
  return {
    registry,
    mcp,
    processes,
    workspaces,
    backend,
    backends: executions.available().map((e) => e.backend),
    backendFor: (sessionKey) => backendOfSession(executions, sessionKey),
    anyBackend: executions.available().length > 0,
    executions,
    stageAttachments: (job) => copyAttachments(access, job),
    workspacePruned: (dir) => removeCheckpoints(config.homeDir, dir),
    beforeChange: async (job, note) =>
      checkpointers.get(executions.backendOf(job.origin.sessionKey))?.(job, note),
    transcribe: createTranscriber(config, { logger, unavailable }),
    speakReply: speech.speakReply,
    unavailable,
    async endSession(sessionKey, sessionId) {
      await processes?.killAll(sessionKey);
      await browser.endSession(sessionKey, sessionId);
      // Per-user workspaces outlive a session: their helper ends when idle.
      const exec = executionOf(executions, sessionKey);
      if (config.exec.workspaceScope === "session" && "backend" in exec)
        await exec.backend.release?.(workspaces.workspaceFor({ sessionKey }));
    },
    async close() {
      await mcp.stop();
      await processes?.closeAll();
      for (const exec of executions.available()) await exec.backend.close();
      await web.close();
      await browser.close();
      ha.close();
    },
  };
}
