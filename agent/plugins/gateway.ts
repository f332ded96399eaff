/**
 * Plugins on the gateway: `/plugins`, `/reload-plugins`, the plugins' own commands, a `/status` line and
 * the `turnFinished` hook.
 */
import type { CommandModule } from "../../core/commands.js";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { GatewayEvents, TurnRecord, TurnResult } from "../../core/turn.js";
import type { Plugins } from "./create.js";
import type { PluginHost } from "./host.js";
import { formatReport } from "./settings.js";

/** What plugins need of the gateway's runner (`GatewayRunner` has this shape). */
export interface PluginsGateway
  extends GatewayEvents<{ type: "turn-finished"; turn: TurnRecord; result: TurnResult }> {
  commands: { add(module: CommandModule): unknown };
  /** Adds a line to `/status`. */
  addStatusLine(line: () => string): unknown;
}

/**
 * Gateway side: `/plugins`, `/reload-plugins`, the plugins' commands, a `/status` line and the
 * `turnFinished` hook on the runner. `announceReload`, where worker processes run the turns (Redis),
 * tells them to reload their plugins too and resolves with how many it told (it may reject).
 */
export function attachPlugins(
  plugins: Plugins,
  ports: {
    gateway: PluginsGateway;
    logger: Logger;
    announceReload?: (() => Promise<number>) | undefined;
  },
): void {
  const { gateway: runner, logger, announceReload } = ports;
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
