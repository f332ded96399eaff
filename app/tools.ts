/**
 * The agent's tools, in one explicit list: each tool (or toolset) lives in its own folder under
 * `tools/`; this file registers them. Toolsets: "core" (`session_search`), "cron" (`cronjob`), "memory"
 * (`memory`), "skills" (`skills_list`, `skill_view`, `skill_manage`), "terminal" (`terminal`, `process`;
 * only where the configured execution backend is available), "files" (`read_file`, `write_file`,
 * `patch`, `search_files`, in the same workspaces).
 */
import { join } from "node:path";
import { delegateTool } from "../agent/delegate/tool.js";
import {
  createExecutionBackend,
  DEFAULT_LIMITS,
  type ExecutionBackend,
  type ProcessInfo,
  ProcessRegistry,
  SandboxBackend,
  WorkspaceAccess,
  WorkspaceManager,
  WorkspaceQuota,
} from "../agent/exec/index.js";
import { ToolRegistry } from "../agent/tool-registry.js";
import { clarifyTool } from "../agent/tools/clarify/index.js";
import { cronjobTool } from "../agent/tools/cron/index.js";
import { fileTools } from "../agent/tools/files/tools.js";
import { McpManager, mcpToolset } from "../agent/tools/mcp/index.js";
import { type McpSaveDir, mcpServerTools, mcpUtilityTools } from "../agent/tools/mcp/tools.js";
import { memoryTool } from "../agent/tools/memory/index.js";
import { sessionSearchTool } from "../agent/tools/session-search/index.js";
import { skillsTools } from "../agent/tools/skills/index.js";
import { taskBoardTool } from "../agent/tools/task-board/index.js";
import { terminalTools } from "../agent/tools/terminal/index.js";
import { todoTool } from "../agent/tools/todo/index.js";
import { createVoice } from "../agent/tools/voice/index.js";
import { createWorkerHtmlConverter } from "../agent/tools/web/html-converter.js";
import { createWebSearchProvider } from "../agent/tools/web/search/index.js";
import { webTools } from "../agent/tools/web/tools.js";
import type { Tool } from "../agent/types.js";
import type { SpeakReply } from "../agent/voice-reply.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TurnJob } from "../core/turn.js";
import type { InboundAttachment } from "../core/types.js";
import { execBackendOptions, type HeraldConfig } from "./config.js";
import { sensesTools } from "./senses-tools.js";
import { copyAttachments, mcpWorkspaceFiles } from "./workspace-files.js";

/** The tools that need nothing but their context. Later features add theirs here. */
export const builtinTools: readonly Tool[] = [
  sessionSearchTool,
  cronjobTool,
  memoryTool,
  ...skillsTools,
  clarifyTool,
  todoTool,
  delegateTool,
  taskBoardTool,
];

/**
 * What the system prompt says of each toolset not sent up front (`tools.lazy`); the tool names are
 * listed beside it. Fixed text: it is part of every request's prefix.
 */
export const toolsetSummaries: Readonly<Record<string, string>> = {
  core: "search past conversations, ask the user, keep a plan",
  cron: "schedule tasks and reminders",
  memory: "save and edit long-term memory",
  skills: "list, read and write saved procedures",
  terminal: "run shell commands and background processes in the session's workspace",
  files: "read, write, patch and search files in the workspace",
  web: "search the web and read pages",
  voice: "speak text as a voice note",
  vision: "describe or read images",
  messaging: "send messages and files to chats",
  mcp: "resources and prompts of the MCP servers",
};

/** A registry holding `tools`. @defaultValue tools: builtinTools */
export function createToolRegistry(tools: readonly Tool[] = builtinTools): ToolRegistry {
  return new ToolRegistry().register(...tools).describeToolsets(toolsetSummaries);
}

/** The agent's tools of one process (gateway or worker), with what they hold open. */
export interface AgentTools {
  registry: ToolRegistry;
  /** Background processes of the terminal tools; undefined when they are off. */
  processes: ProcessRegistry | undefined;
  workspaces: WorkspaceManager;
  /** The execution backend, when available here (plugins with `exec` run their commands on it). */
  backend?: ExecutionBackend | undefined;
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
  unavailable: { toolset: string; missing: string; fix: string }[];
  /** A session ended: its background processes are killed, its workspace's file helper ended. */
  endSession(sessionKey: string): Promise<void>;
  /** Kills background processes and closes the backend. */
  close(): Promise<void>;
}

/**
 * Every tool this process can offer. The terminal tools come only where the configured backend is
 * available: a missing bubblewrap turns them off (and says how to install it), never falls back to
 * running commands on the host.
 */
export async function createAgentTools(config: HeraldConfig, logger: Logger): Promise<AgentTools> {
  const tools: Tool[] = [...builtinTools];
  const unavailable: AgentTools["unavailable"] = [];
  const workspaces = new WorkspaceManager({
    rootDir: join(config.homeDir, "workspaces"),
    scope: config.exec.workspaceScope,
    logger,
  });
  let backend: ExecutionBackend | undefined;
  let access: WorkspaceAccess | undefined;
  let processes: ProcessRegistry | undefined;
  // Files MCP tools return: into the session's workspace where the file tools are on, else the cache.
  let mcpFiles: McpSaveDir | undefined;
  try {
    const options = execBackendOptions(config);
    const { maxTimeoutS, dangerousCommands } = config.exec;
    const candidate = createExecutionBackend(options, logger);
    const availability = await candidate.checkAvailable();
    if (availability.available) {
      backend = candidate;
      const quota = new WorkspaceQuota({
        backend,
        quotaBytes: options.limits.workspaceQuotaBytes ?? DEFAULT_LIMITS.workspaceQuotaBytes,
        isBusy: (dir) => processes?.isBusy(dir) ?? false,
        logger,
      });
      const exitNotices = new Map<string, (info: ProcessInfo) => void>();
      processes = new ProcessRegistry({
        backend,
        logger,
        onExit: (info) => {
          quota.invalidate(info.workspaceDir);
          exitNotices.get(info.id)?.(info);
          exitNotices.delete(info.id);
        },
      });
      // Commands in the sandbox and the container see the workspace at /workspace: so do the tools.
      const virtualRoot = backend.name === "sandbox" || backend.name === "docker" ? "/workspace" : undefined;
      access = new WorkspaceAccess({ workspaces, backend, quota, virtualRoot });
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
      );
      if (dangerousCommands === "off")
        logger.warn({}, "dangerous commands run without approval (exec.dangerous_commands: off)");
      tools.push(...fileTools({ access, backend }));
      mcpFiles = mcpWorkspaceFiles(access);
      if (backend.name === "local")
        logger.warn({}, "terminal tools run commands on this host, unsandboxed (exec.backend: local)");
      if (backend instanceof SandboxBackend) {
        const { cgroupDir, runsAs } = backend.processLimit();
        if (cgroupDir) logger.info({ cgroupDir }, "sandboxed commands get a pids cgroup each");
        if (runsAs)
          logger.info(runsAs, "the gateway is root: sandboxed commands run as this unprivileged user");
      }
    } else {
      await candidate.close();
      unavailable.push({ toolset: "terminal", missing: availability.missing, fix: availability.fix });
      logger.warn({ missing: availability.missing, fix: availability.fix }, "terminal tools are off");
    }
  } catch (err) {
    unavailable.push({
      toolset: "terminal",
      missing: describeError(err),
      fix: "correct the exec section of config.yaml",
    });
    logger.warn({ error: describeError(err) }, "terminal tools are off");
  }
  const web = webToolsOf(config, logger, unavailable);
  tools.push(...web.tools);
  // Without the terminal tools (no command runs in any workspace) the files are this host's; attachments
  // still go to the workspace: vision_analyze and send_message read them there, and only there (never
  // another session's files in the shared cache).
  access ??= new WorkspaceAccess({ workspaces });
  const workspaceAccess = access;
  const stageAttachments = (job: TurnJob) => copyAttachments(workspaceAccess, job);
  const senses = sensesTools(config, logger, unavailable, workspaceAccess);
  tools.push(...senses.tools);
  const registry = createToolRegistry(tools);
  const mcp = mcpOf(config, registry, logger, mcpFiles);
  return {
    registry,
    mcp,
    processes,
    workspaces,
    backend,
    stageAttachments,
    transcribe: transcriberOf(config, logger, unavailable),
    speakReply: senses.speakReply,
    unavailable,
    async endSession(sessionKey) {
      await processes?.killAll(sessionKey);
      // Per-user workspaces outlive a session: their helper ends when idle.
      if (config.exec.workspaceScope === "session")
        await backend?.release?.(workspaces.workspaceFor({ sessionKey }));
    },
    async close() {
      await mcp.stop();
      await processes?.closeAll();
      await backend?.close();
      await web.close();
    },
  };
}

/**
 * The MCP servers: their resource/prompt tools now, each server's own tools once it connected (and
 * again on every change); the servers connect in the background, nothing waits for them.
 */
function mcpOf(
  config: HeraldConfig,
  registry: ToolRegistry,
  logger: Logger,
  files: McpSaveDir | undefined,
): McpManager {
  const log = logger.child({ component: "mcp" });
  const manager = new McpManager({ servers: config.mcpServers, logger: log });
  registry.register(...mcpUtilityTools(manager, files));
  manager.toolsChanged.add((name) => {
    const server = manager.get(name);
    registry.describeToolsets({ [mcpToolset(name)]: `tools of the MCP server ${name}` });
    try {
      registry.replaceToolset(mcpToolset(name), server ? mcpServerTools(server, files) : []);
    } catch (err) {
      log.error({ server: name, error: describeError(err) }, "mcp tools not registered");
    }
  });
  return manager;
}

/** The web tools: search when a provider is configured, extraction always (HTML converted off-thread). */
function webToolsOf(
  config: HeraldConfig,
  logger: Logger,
  unavailable: AgentTools["unavailable"],
): { tools: Tool[]; close(): Promise<void> } {
  let search: ReturnType<typeof createWebSearchProvider>;
  try {
    search = createWebSearchProvider(config.web.search, { configKey: "web.search" });
  } catch (err) {
    unavailable.push({
      toolset: "web",
      missing: `web_search: ${describeError(err)}`,
      fix: "correct web.search in config.yaml",
    });
    logger.warn({ error: describeError(err) }, "web search is off");
  }
  if (!search)
    unavailable.push({
      toolset: "web",
      missing: "web_search: no search provider configured",
      fix: "set HERALD_WEB_SEARCH_PROVIDER=searxng and HERALD_WEB_SEARCH_URL=<your SearXNG> (or brave / tavily with HERALD_WEB_SEARCH_KEY)",
    });
  const converter = createWorkerHtmlConverter();
  return {
    tools: webTools({ search, allowPrivate: config.web.allowPrivate, convertHtml: converter.convert }),
    close: () => converter.close(),
  };
}

/** Transcription of voice notes before the turn, when `voice.stt` is set; a bad section is reported. */
function transcriberOf(
  config: HeraldConfig,
  logger: Logger,
  unavailable: AgentTools["unavailable"],
): AgentTools["transcribe"] {
  if (!config.voice.stt) return undefined;
  try {
    const voice = createVoice({ stt: config.voice.stt }, { logger, keyPrefix: "voice" });
    const transcribe = voice.transcribe;
    if (!transcribe) return undefined;
    return async (attachment, signal) => (await transcribe(attachment.path, { signal })).text;
  } catch (err) {
    unavailable.push({
      toolset: "voice",
      missing: describeError(err),
      fix: "correct voice.stt (HERALD_STT_URL, HERALD_STT_MODEL)",
    });
    logger.warn({ error: describeError(err) }, "voice notes will not be transcribed");
    return undefined;
  }
}
