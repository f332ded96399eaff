/**
 * Plugins and hooks wired into a process: the host over `HERALD_HOME/plugins` (with the exec backend
 * where there is one), the hook runner over its hooks, the tool registry that adds plugin tools, and
 * (in the gateway) `/plugins`, `/reload-plugins`, the plugins' own commands, `/status` lines and the
 * turn-finished hook.
 */
import { classifyCommand } from "../agent/exec/approvals/index.js";
import { runCommand } from "../agent/exec/index.js";
import { HookRunner } from "../agent/plugins/hooks/runner.js";
import { type PluginExecRunner, PluginHost } from "../agent/plugins/host.js";
import { PluginToolRegistry } from "../agent/plugins/registry.js";
import { formatReport, pluginsFolder } from "../agent/plugins/settings.js";
import type { ToolRegistry } from "../agent/tool-registry.js";
import { createGuardedFetch } from "../agent/tools/web/index.js";
import type { CommandModule } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { GatewayRunner } from "../gateway/runner.js";
import type { HeraldConfig } from "./config.js";
import type { AgentTools } from "./tools.js";

/** The plugins of one process. */
export interface Plugins {
  /** `plugins.enabled`: false loads none, and `/reload-plugins` says so instead of loading. */
  enabled: boolean;
  host: PluginHost;
  hooks: HookRunner;
  /** `base` plus the loaded plugins' tools (as they are at each turn). */
  registry(base: ToolRegistry): ToolRegistry;
}

/** The plugins folder. */
export function pluginsDir(config: HeraldConfig): string {
  return pluginsFolder(config.plugins, config.homeDir);
}

export { formatReport } from "../agent/plugins/settings.js";

/**
 * Builds the host and loads the plugins (a plugin that fails is logged and skipped; this never rejects
 * for a plugin's fault). `tools` gives the exec backend and the built-in tool names.
 */
export async function createPlugins(
  config: HeraldConfig,
  logger: Logger,
  tools?: AgentTools | undefined,
): Promise<Plugins> {
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
 * plugin is named in `plugins.allow_private`. One per plugin (its own connection pool), kept across reloads.
 */
function pluginFetch(config: HeraldConfig): (plugin: string) => typeof fetch {
  const fetches = new Map<string, typeof fetch>();
  return (plugin) => {
    let guarded = fetches.get(plugin);
    if (!guarded) {
      guarded = createGuardedFetch({
        allowPrivate: config.web.allowPrivate || config.plugins.allowPrivate.includes(plugin),
        hint:
          "plugins may reach only public addresses unless the owner allows it: add " +
          `"${plugin}" to plugins.allow_private in config.yaml (HERALD_PLUGINS_ALLOW_PRIVATE), or set ` +
          "web.allow_private to let every plugin and web tool reach private addresses",
      });
      fetches.set(plugin, guarded);
    }
    return guarded;
  };
}

/** Plugin commands run on the exec backend in the turn's workspace; dangerous ones are refused. */
function execRunner(tools: AgentTools): PluginExecRunner | undefined {
  const { backend, workspaces } = tools;
  if (!backend) return undefined;
  return async (origin, command, { timeoutMs, signal }) => {
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

/**
 * Gateway side: `/plugins`, `/reload-plugins`, the plugins' commands, a `/status` line and the
 * `turnFinished` hook on the runner. `announceReload`, where worker processes run the turns (Redis),
 * tells them to reload their plugins too and resolves with how many it told (it may reject).
 */
export function attachPlugins(
  runner: GatewayRunner,
  plugins: Plugins,
  logger: Logger,
  announceReload?: (() => Promise<number>) | undefined,
): void {
  const { host, hooks } = plugins;
  const log = logger.child({ component: "plugins" });
  runner.commands.add(
    pluginCommands(host, log, plugins.enabled ? announceReload : undefined, plugins.enabled),
  );
  runner.commands.add(host.commands());
  runner.addStatusLine(() => {
    const reports = host.reports();
    if (reports.length === 0) return "Plugins: none";
    return `Plugins: ${reports.map((r) => `${r.name} (${r.status})`).join(", ")}`;
  });
  runner.on("turn-finished", ({ turn, result }) => {
    if (!hooks.has("turnFinished")) return;
    const origin = {
      platform: turn.chat.platform,
      chatId: turn.chat.chatId,
      threadId: turn.chat.threadId,
      chatType: turn.inbound?.chatType ?? ("dm" as const),
      userId: turn.userId,
      sessionKey: turn.sessionKey,
    };
    const reply = result.kind === "ok" ? result.reply.text : undefined;
    void hooks.turnFinished(turn.id, origin, result.kind, reply);
  });
}

function pluginCommands(
  host: PluginHost,
  log: Logger,
  announceReload: (() => Promise<number>) | undefined,
  enabled: boolean,
): CommandModule {
  const list = () => {
    const reports = host.reports();
    if (reports.length === 0)
      return "No plugins. Put one in HERALD_HOME/plugins/<name>/ and send /reload-plugins.";
    const commands = host.commandHelp();
    return [
      "Plugins:",
      ...reports.map((r) => `• ${formatReport(r)}`),
      ...(commands.length ? ["", ...commands] : []),
    ].join("\n");
  };
  return {
    commands: {
      plugins: { description: "list plugins and their state", run: list },
      "reload-plugins": {
        description: "load the plugins folder again (new, changed and removed plugins)",
        // Every chat's plugin tools change: the owner's decision, not one user's.
        access: "owner",
        run: () => {
          if (!enabled)
            return "Plugins are off (plugins.enabled: false in config.yaml, or HERALD_PLUGINS_ENABLED=false): nothing was loaded. Turn them on and restart Herald.";
          const reload = () =>
            host.load().then(
              (reports) =>
                log.info({ plugins: reports.map((r) => `${r.name}:${r.status}`) }, "plugins reloaded"),
              (err: unknown) => log.error({ err: describeError(err) }, "plugin reload failed"),
            );
          if (!announceReload) {
            return { reply: "🔄 Reloading plugins… /plugins shows the result.", after: () => void reload() };
          }
          return {
            notice: "🔄 Reloading plugins here and on the workers…",
            answer: async () => {
              await reload();
              return `Reloaded the plugins here (/plugins shows them) ${await toldWorkers(announceReload, log)}`;
            },
          };
        },
      },
    },
  };
}

/** The end of `/reload-plugins`'s answer on Redis: how many workers were told, none, or a failure. */
async function toldWorkers(announce: () => Promise<number>, log: Logger): Promise<string> {
  let told: number;
  try {
    told = await announce();
  } catch (err) {
    log.error({ err: describeError(err) }, "could not tell the workers to reload their plugins");
    return `but could not tell the workers: ${describeError(err)}. Send /reload-plugins again, or restart the workers.`;
  }
  if (told === 0) {
    return "and told no worker: none is running. A worker loads the plugins when it starts.";
  }
  return `and told ${told} worker${told === 1 ? "" : "s"} to reload theirs; each logs the outcome (herald logs --worker).`;
}
