/**
 * The plugins of one process (gateway or worker): the host over `HERALD_HOME/plugins` (with each
 * agent's exec backend where there is one), the hook runner over its hooks, and the tool registry that adds plugin
 * tools.
 */
import type { Logger } from "../../core/logger.js";
import { classifyCommand } from "../exec/approvals/index.js";
import { runCommand } from "../exec/run.js";
import type { ExecutionBackend } from "../exec/types.js";
import type { WorkspaceManager } from "../exec/workspaces.js";
import type { ToolRegistry } from "../tool-registry.js";
import { HookRunner } from "./hooks/runner.js";
import { type PluginExecRunner, PluginHost } from "./host.js";
import { PluginToolRegistry } from "./registry.js";
import { type PluginsSection, pluginsFolder } from "./settings.js";

/** The settings plugins read (`HeraldConfig` has this shape). */
export interface PluginsConfig {
  homeDir: string;
  web: { allowPrivate: boolean };
  plugins: PluginsSection;
}

/** The process's tools as plugins use them: the built-in names, the exec backend and workspaces. */
export interface PluginTools {
  registry: ToolRegistry;
  /** The default agent's backend, where it is available here. */
  backend?: ExecutionBackend | undefined;
  /**
   * The backend of a session key's agent, or what it misses here; plugin commands run on it. Must not
   * throw. @defaultValue `backend` for every session
   */
  backendFor?: ((sessionKey: string) => ExecutionBackend | { missing: string; fix: string }) | undefined;
  /** Whether any agent's backend is available here (`exec` is offered then). @defaultValue `backend` is set */
  anyBackend?: boolean | undefined;
  workspaces: WorkspaceManager;
}

/** The plugins of one process. */
export interface Plugins {
  /** `plugins.enabled`: false loads none, and `/reload-plugins` says so instead of loading. */
  enabled: boolean;
  host: PluginHost;
  hooks: HookRunner;
  /** `base` plus the loaded plugins' tools (as they are at each turn). */
  registry(base: ToolRegistry): ToolRegistry;
}

/** The plugins folder: `plugins.dir`, else `HERALD_HOME/plugins`. */
export function pluginsDir(config: Pick<PluginsConfig, "homeDir" | "plugins">): string {
  return pluginsFolder(config.plugins, config.homeDir);
}

/**
 * Builds the host and loads the plugins (a plugin that fails is logged and skipped; this never rejects
 * for a plugin's fault). `ports.tools` gives the exec backend and the built-in tool names.
 */
export async function createPlugins(
  config: PluginsConfig,
  ports: { logger: Logger; tools?: PluginTools | undefined },
): Promise<Plugins> {
  const { logger, tools } = ports;
  const caps = config.plugins.capabilities;
  const host = new PluginHost({
    dir: pluginsDir(config),
    homeDir: config.homeDir,
    logger,
    allowed: (platform, chatType) => caps.platforms[platform]?.[chatType] ?? caps[chatType],
    reservedTools: () =>
      new Set(tools ? tools.registry.forToolsets(tools.registry.toolsets()).map((t) => t.name) : []),
    exec: tools ? execRunner(tools) : undefined,
    fetch: pluginFetch(config),
    ownersOnly: (plugin) => config.plugins.ownersOnly.includes(plugin),
  });
  if (config.plugins.enabled) await host.load();
  const hooks = new HookRunner({
    source: () => host.hooks(),
    timeoutMs: config.plugins.hookTimeoutMs,
    logger,
  });
  return {
    enabled: config.plugins.enabled,
    host,
    hooks,
    registry: (base) => new PluginToolRegistry(base, () => host.tools()),
  };
}

/**
 * Each plugin's `ctx.fetch`: public addresses only, unless `web.allow_private` opens every fetch or the
 * plugin is named in `plugins.allow_private`. One per plugin (its own connection pool), kept across reloads;
 * the web tools' module loads at a plugin's first fetch.
 */
function pluginFetch(config: PluginsConfig): (plugin: string) => typeof fetch {
  const fetches = new Map<string, typeof fetch>();
  return (plugin) => {
    let guarded = fetches.get(plugin);
    if (!guarded) {
      let inner: Promise<typeof fetch> | undefined;
      guarded = async (input, init) => {
        inner ??= import("../tools/web/index.js").then(({ createGuardedFetch }) =>
          createGuardedFetch({
            allowPrivate: config.web.allowPrivate || config.plugins.allowPrivate.includes(plugin),
            hint:
              "plugins may reach only public addresses unless the owner allows it: add " +
              `"${plugin}" to plugins.allow_private in config.yaml (HERALD_PLUGINS_ALLOW_PRIVATE), or set ` +
              "web.allow_private to let every plugin and web tool reach private addresses",
          }),
        );
        return (await inner)(input, init);
      };
      fetches.set(plugin, guarded);
    }
    return guarded;
  };
}

/**
 * Plugin commands run on the backend of the turn's agent, in its workspace; dangerous ones are refused,
 * and so is a command whose agent's backend is not available here (never another agent's backend).
 */
function execRunner(tools: PluginTools): PluginExecRunner | undefined {
  const { workspaces } = tools;
  if (!(tools.anyBackend ?? tools.backend)) return undefined;
  const backendFor =
    tools.backendFor ?? (() => tools.backend ?? { missing: "no execution backend", fix: "" });
  return async (origin, command, { timeoutMs, signal }) => {
    const backend = backendFor(origin.sessionKey);
    if ("missing" in backend)
      throw new Error(
        `commands are off for this agent: ${backend.missing}${backend.fix ? ` (fix: ${backend.fix})` : ""}`,
      );
    const workspace = await workspaces.ensure({
      sessionKey: origin.sessionKey,
      userKey: `${origin.chat.platform}:user:${origin.userId}`,
    });
    const verdict = classifyCommand(command, { workspaceDir: workspace.dir });
    if (verdict.dangerous) {
      throw new Error(`refused: plugins may not run dangerous commands (${verdict.rule.description})`);
    }
    // Made ready for the backend as the terminal tool does (a root gateway's sandbox user owns it).
    await backend.prepare(workspace, signal);
    const result = await runCommand(backend, workspace, { command, timeoutMs, signal });
    return {
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
      timedOut: result.timedOut,
    };
  };
}
