/**
 * Plugins: folders under `HERALD_HOME/plugins` with a manifest, loaded by the `PluginHost` with the
 * capabilities the owner grants per chat type; their tools join the registry, their commands the
 * gateway's, their hooks the `HookRunner` (order, time limit, errors contained). `sdk.ts` is the public
 * `herald/plugin` module plugins import.
 */
export { createPlugins, type Plugins, type PluginsConfig, type PluginTools, pluginsDir } from "./create.js";
export { linkSdk, readDisabled, STATE_FILE, setEnabled } from "./enabled.js";
export { attachPlugins, type PluginsGateway } from "./gateway.js";
export { HookRunner, type HookRunnerOptions, originOfTurn } from "./hooks/runner.js";
export {
  OWNERS_PLUGINS_TOOLSET,
  PLUGINS_TOOLSET,
  type PluginExecRunner,
  PluginHost,
  type PluginHostOptions,
  type PluginReport,
} from "./host.js";
export { discoverPlugins, importPlugin, PluginLoadError, readManifest } from "./loader.js";
export { PluginToolRegistry } from "./registry.js";
export {
  checkPlugins,
  formatReport,
  type PluginsSection,
  pluginsFolder,
  pluginsSectionSchema,
  pluginsSettings,
} from "./settings.js";
