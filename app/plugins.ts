/**
 * Plugins wired into a process (the mains, `herald plugins`): agent/plugins builds them; this gives them
 * the process's logger and tools.
 */
import { createPlugins as buildPlugins, type Plugins, type PluginTools } from "../agent/plugins/index.js";
import type { Logger } from "../core/logger.js";
import type { HeraldConfig } from "./config.js";

/**
 * Builds the host and loads the plugins (a plugin that fails is logged and skipped; this never rejects
 * for a plugin's fault). `tools` gives the exec backend and the built-in tool names.
 */
export function createPlugins(config: HeraldConfig, logger: Logger, tools?: PluginTools): Promise<Plugins> {
  return buildPlugins(config, { logger, tools });
}
