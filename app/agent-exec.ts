/**
 * Each agent's execution (part of the tools' assembly, app/tools.ts). The default agent's commands run
 * on `exec.backend`, a further agent's on its `agents[].exec_backend`; this process opens one
 * `Execution` per backend in use, all on one `WorkspaceManager` that keeps each agent's workspaces
 * under its own root. A tool built on each backend (terminal, files, code, checkpoints) is one tool for
 * the model, declared as its agent's backend has it and run on that backend, read from the session key: the
 * gateway and every worker resolve it alike from the one shared config. A backend that is not
 * available here turns off only its agents' tools; nothing falls back to another backend.
 */
import {
  type BackendName,
  type BusyWorkspaces,
  type Execution,
  type ExecutionBackend,
  type OpenWorkspace,
  openExecution,
  WorkspaceAccess,
  WorkspaceManager,
  type WorkspaceOwner,
  workspaceRoots,
} from "../agent/exec/index.js";
import type { Tool, ToolContext, ToolOutput } from "../agent/index.js";
import { agentOfKey } from "../core/chat.js";
import type { Logger } from "../core/logger.js";
import { execBackendOptions, type HeraldConfig } from "./config.js";

/** Why a backend is not available here, and the fix. */
export interface MissingBackend {
  missing: string;
  fix: string;
}

/** The executions of one process, by the backend each agent's commands run on. */
export interface AgentExecutions {
  /** Every agent's workspaces, each under its agent's root. */
  workspaces: WorkspaceManager;
  /** The default agent's backend. */
  defaultBackend: BackendName;
  /** Each backend in use (the default agent's first): its execution, or what it misses here. */
  byBackend: ReadonlyMap<BackendName, Execution | MissingBackend>;
  /** The backend of the agent a session key names. */
  backendOf(sessionKey: string): BackendName;
  /** The available executions. */
  available(): Execution[];
}

/**
 * Opens the workspaces and an execution for each backend an agent uses. A `local` backend of a further
 * agent is logged as loudly as `exec.backend: local`. Never throws (as `openExecution`).
 */
export async function openAgentExecutions(
  config: HeraldConfig,
  logger: Logger,
  worker: string | undefined,
): Promise<AgentExecutions> {
  const workspaces = new WorkspaceManager({
    ...workspaceRoots(config),
    scope: config.exec.workspaceScope,
    logger,
  });
  const defaultBackend = config.exec.backend;
  const own = new Map(config.agents.map((a) => [a.name, a.execBackend ?? defaultBackend]));
  const byBackend = new Map<BackendName, Execution | MissingBackend>();
  for (const backend of new Set([defaultBackend, ...own.values()])) {
    const agents = [...own].filter(([, b]) => b === backend).map(([name]) => name);
    const log = backend === defaultBackend ? logger : logger.child({ backend, agents });
    const options = { ...execBackendOptions(config), backend };
    byBackend.set(backend, await openExecution(options, { workspaces, logger: log, worker }));
  }
  for (const [agent, backend] of own)
    if (backend === "local" && defaultBackend !== "local")
      logger.warn(
        { agent },
        "the agent's terminal tools run commands on this host, unsandboxed (agents[].exec_backend: local)",
      );
  const backendOf = (sessionKey: string) => {
    const agent = agentOfKey(sessionKey);
    return (agent && own.get(agent)) || defaultBackend;
  };
  const available = () => [...byBackend.values()].filter((e): e is Execution => "backend" in e);
  return { workspaces, defaultBackend, byBackend, backendOf, available };
}

/** The execution of a session key's agent, or what it misses. */
export function executionOf(execs: AgentExecutions, sessionKey: string): Execution | MissingBackend {
  return execs.byBackend.get(execs.backendOf(sessionKey)) as Execution | MissingBackend;
}

/** The backend of a session key's agent, or what it misses. */
export function backendOfSession(
  execs: AgentExecutions,
  sessionKey: string,
): ExecutionBackend | MissingBackend {
  const exec = executionOf(execs, sessionKey);
  return "backend" in exec ? exec.backend : exec;
}

/**
 * One tool per name out of the tools built on each backend (`toolsOf`): a call runs the tool of its
 * agent's backend, and where that backend has none (not available here, or the tool needs another
 * backend) the call answers why. With one backend in use the tools are returned as they are.
 */
export function perAgentTools(
  execs: AgentExecutions,
  toolsOf: ReadonlyMap<BackendName, readonly Tool[]>,
): Tool[] {
  const lists = [...toolsOf.values()];
  if (execs.byBackend.size === 1) return [...(lists[0] ?? [])];
  const names = [...new Set(lists.flat().map((t) => t.name))];
  return names.map((name) => {
    const variants = new Map<BackendName, Tool>();
    for (const [backend, tools] of toolsOf) {
      const tool = tools.find((t) => t.name === name);
      if (tool) variants.set(backend, tool);
    }
    // One declaration per tool in the registry: the default agent's where it has the tool. Each turn
    // is given its agent's own (`forSession`), so the description names where its commands run.
    const shown = (variants.get(execs.defaultBackend) ?? [...variants.values()][0]) as Tool;
    const execute = (args: unknown, ctx: ToolContext): Promise<ToolOutput | string> => {
      const backend = execs.backendOf(ctx.origin.sessionKey);
      const tool = variants.get(backend);
      if (tool) return tool.execute(args, ctx);
      const exec = execs.byBackend.get(backend);
      const why =
        exec && "missing" in exec
          ? `${exec.missing} (fix: ${exec.fix})`
          : `${name} does not work on the ${backend} backend`;
      return Promise.resolve({ content: `error: ${name} is off for this agent: ${why}`, isError: true });
    };
    const combined: Tool = Object.assign(Object.create(shown) as Tool, { execute, forSession });
    // The same object per backend, so each agent's requests keep one stable prefix.
    const own = new Map(
      [...variants].map(([b, t]) => [b, Object.assign(Object.create(t) as Tool, { execute })] as const),
    );
    function forSession(sessionKey: string): Tool {
      return own.get(execs.backendOf(sessionKey)) ?? combined;
    }
    return combined;
  });
}

/**
 * The workspaces' files for the tools that are not a backend's own (attachments, send_message, the
 * senses, the browser, MCP files): each workspace opened through its agent's execution, or on this host
 * where that backend is not available (no command runs in its workspaces then).
 */
export class AgentWorkspaceAccess extends WorkspaceAccess {
  readonly #execs: AgentExecutions;
  readonly #hostOnly: WorkspaceAccess;

  constructor(execs: AgentExecutions) {
    const first = executionOf(execs, "");
    super("backend" in first ? first.access : { workspaces: execs.workspaces });
    this.#execs = execs;
    this.#hostOnly = new WorkspaceAccess({ workspaces: execs.workspaces });
  }

  override open(owner: WorkspaceOwner, signal?: AbortSignal): Promise<OpenWorkspace> {
    const exec = executionOf(this.#execs, owner.sessionKey);
    return ("backend" in exec ? exec.access : this.#hostOnly).open(owner, signal);
  }
}

/** The background processes of every execution, as housekeeping and the end of a session ask them. */
export function allProcesses(execs: AgentExecutions): BusyWorkspaces & {
  killAll(sessionKey: string): Promise<void>;
  closeAll(): Promise<void>;
} {
  const registries = () => execs.available().map((e) => e.processes);
  return {
    isBusy: (dir) => registries().some((p) => p.isBusy(dir)),
    busyWorkspaces: () => registries().flatMap((p) => [...p.busyWorkspaces()]),
    async killAll(sessionKey) {
      for (const p of registries()) await p.killAll(sessionKey);
    },
    async closeAll() {
      for (const p of registries()) await p.closeAll();
    },
  };
}
