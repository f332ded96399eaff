/**
 * `herald plugins list|enable|disable`. `list` loads every plugin the way the gateway does (so a broken
 * one shows its file and line); `enable`/`disable` write `plugins-state.json` in the plugins folder,
 * which the gateway (and on Redis each worker) reads on start and on `/reload-plugins`.
 */
import type { Command } from "commander";
import {
  discoverPlugins,
  formatReport,
  pluginsDir,
  readDisabled,
  setEnabled,
} from "../../agent/plugins/index.js";
import { silentLogger } from "../../core/logger.js";
import { type HeraldConfig, loadConfig } from "../config.js";
import { createPlugins } from "../plugins.js";
import { cliAction } from "./action.js";

/** What the plugins commands use besides their arguments (tests pass their own). */
export interface PluginsCliDeps {
  /** @defaultValue loadConfig() */
  config?: () => HeraldConfig;
  /** @defaultValue process.stdout */
  out?: (text: string) => void;
}

/** Adds `herald plugins …` to the program. */
export function registerPluginsCommands(program: Command, deps: PluginsCliDeps = {}): void {
  const config = deps.config ?? (() => loadConfig());
  const out = deps.out ?? ((text: string) => void process.stdout.write(text));
  const plugins = program
    .command("plugins")
    .description("plugins in HERALD_HOME/plugins: list, enable, disable");

  plugins
    .command("list")
    .description("every plugin with its state, capabilities, tools, commands and hooks (and why one failed)")
    .action(
      cliAction(async () => {
        const cfg = config();
        const { host } = await createPlugins(cfg, silentLogger());
        const reports = host.reports();
        if (!cfg.plugins.enabled) out("Plugins are switched off (plugins.enabled: false).\n");
        if (reports.length === 0) out(`No plugins in ${pluginsDir(cfg)}.\n`);
        for (const report of reports) out(`${formatReport(report)}\n`);
        if (reports.some((r) => r.status === "failed")) process.exitCode = 1;
      }),
    );

  const toggle = (enabled: boolean) =>
    cliAction(async (name: string) => {
      const cfg = config();
      const dir = pluginsDir(cfg);
      if (!discoverPlugins(dir).some((p) => p.name === name)) {
        const known = discoverPlugins(dir).map((p) => p.name);
        throw new Error(
          `There is no plugin '${name}' in ${dir}${known.length ? ` (there are: ${known.join(", ")})` : ""}. \`herald plugins list\` shows them.`,
        );
      }
      const was = !readDisabled(dir).has(name);
      setEnabled(dir, name, enabled);
      const state = enabled ? "enabled" : "disabled";
      out(
        was === enabled
          ? `${name} was already ${state}.\n`
          : `${name} ${state}. A running gateway (and on Redis its workers) picks this up on /reload-plugins or a restart.\n`,
      );
    });
  plugins.command("enable <name>").description("switch a plugin on").action(toggle(true));
  plugins
    .command("disable <name>")
    .description("switch a plugin off (its folder stays)")
    .action(toggle(false));
}
