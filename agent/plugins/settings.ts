/**
 * The `plugins:` settings (plugins in `HERALD_HOME/plugins/<name>/`): the section, its env names and
 * reference rows, and the doctor's lines, one per plugin as the gateway would load it.
 */
import { join } from "node:path";
import { z } from "zod";
import { silentLogger } from "../../core/logger.js";
import { type DoctorContext, type DoctorLine, defineFeature } from "../../core/settings.js";
import type { PluginReport } from "./host.js";
import { CAPABILITIES } from "./sdk.js";

const capabilityList = z.array(z.enum(CAPABILITIES));

/** The `plugins` section. */
export const pluginsSectionSchema = z
  .strictObject({
    /** Load plugins at all. */
    enabled: z.boolean().default(true),
    /** The plugins folder. @defaultValue HERALD_HOME/plugins */
    dir: z.string().min(1).optional(),
    /** How long one hook may take before it counts as no change. */
    hookTimeoutMs: z.number().int().positive().default(2000),
    /**
     * Plugins whose `ctx.fetch` may reach private, loopback and link-local addresses (`web.allowPrivate`
     * opens every plugin's). Others reach only public addresses.
     */
    allowPrivate: z.array(z.string()).default([]),
    /**
     * Plugins whose tools and commands only owners' turns get (a plugin that acts elsewhere with the
     * operator's credentials). Others' tools reach every admitted user.
     */
    ownersOnly: z.array(z.string()).default([]),
    /** What plugins may do by chat type (granted only when the plugin also declares it). */
    capabilities: z
      .strictObject({
        dm: capabilityList.default([...CAPABILITIES]),
        group: capabilityList.default(["network", "state"]),
        /** Per platform overrides: `{ telegram: { group: [...] } }`. */
        platforms: z
          .record(
            z.string(),
            z.strictObject({ dm: capabilityList.optional(), group: capabilityList.optional() }),
          )
          .default({}),
      })
      .prefault({}),
  })
  .prefault({});

/** The parsed `plugins` section. */
export type PluginsSection = z.output<typeof pluginsSectionSchema>;

/** The plugins folder: `plugins.dir`, else `HERALD_HOME/plugins`. */
export function pluginsFolder(section: PluginsSection, homeDir: string): string {
  return section.dir ?? join(homeDir, "plugins");
}

/** One line per plugin: `name 1.0.0 loaded (tools: a, b; commands: /x; hooks: inbound)`. */
export function formatReport(report: PluginReport): string {
  const head = `${report.name}${report.version ? ` ${report.version}` : ""}: ${report.status}`;
  if (report.status === "failed") return `${head} — ${report.error}`;
  const parts = [
    report.capabilities.length ? `capabilities: ${report.capabilities.join(", ")}` : "no capabilities",
    report.tools.length ? `tools: ${report.tools.join(", ")}` : "",
    report.commands.length ? `commands: ${report.commands.map((c) => `/${c}`).join(", ")}` : "",
    report.hooks.length ? `hooks: ${report.hooks.join(", ")}` : "",
  ].filter(Boolean);
  return `${head} (${parts.join("; ")})`;
}

/**
 * Loads the plugins as the gateway would: one line each, a failed one with its file:line. Loading runs
 * no tool, so the plugins get a fetch that refuses (the gateway's own is guarded by the web settings).
 */
export async function checkPlugins(
  section: PluginsSection,
  { homeDir }: DoctorContext,
): Promise<DoctorLine[]> {
  if (!section.enabled) return [{ ok: true, text: "plugins: switched off (plugins.enabled: false)" }];
  const { PluginHost } = await import("./host.js");
  const dir = pluginsFolder(section, homeDir);
  const refused: typeof fetch = () => Promise.reject(new Error("herald doctor runs no plugin tool"));
  const host = new PluginHost({
    dir,
    homeDir,
    logger: silentLogger(),
    allowed: (platform, chatType) =>
      section.capabilities.platforms[platform]?.[chatType] ?? section.capabilities[chatType],
    reservedTools: () => new Set(),
    fetch: () => refused,
    ownersOnly: (plugin) => section.ownersOnly.includes(plugin),
  });
  await host.load();
  const reports = host.reports();
  if (reports.length === 0) return [{ ok: true, text: `plugins: none in ${dir}` }];
  return reports.map((r) => ({
    ok: r.status !== "failed",
    text: `plugin ${formatReport(r)}`,
    ...(r.status === "failed"
      ? { fix: "fix the file named, or `herald plugins disable " + r.name + "`" }
      : {}),
  }));
}

/** Plugins and their capabilities. */
export const pluginsSettings = defineFeature({
  key: "plugins",
  schema: pluginsSectionSchema,
  env: {
    HERALD_PLUGINS_ENABLED: ["enabled", "bool"],
    HERALD_PLUGINS_DIR: ["dir", "string"],
    HERALD_PLUGINS_HOOK_TIMEOUT_MS: ["hook_timeout_ms", "int"],
    HERALD_PLUGINS_ALLOW_PRIVATE: ["allow_private", "list"],
    HERALD_PLUGINS_OWNERS_ONLY: ["owners_only", "list"],
    HERALD_PLUGINS_DM_CAPABILITIES: ["capabilities.dm", "list"],
    HERALD_PLUGINS_GROUP_CAPABILITIES: ["capabilities.group", "list"],
  },
  reference: {
    rows: [
      ["enabled", "load plugins at all"],
      ["dir", "the plugins folder", "`HERALD_HOME/plugins`"],
      ["hook_timeout_ms", "a hook running longer counts as no change"],
      ["allow_private", "plugins whose `ctx.fetch` may reach private addresses"],
      ["owners_only", "plugins whose tools (toolset `plugins_owners`) and commands only owners get"],
      ["capabilities.dm", "capabilities granted in DMs (when the plugin declares them)", "all five"],
      ["capabilities.group", "capabilities granted in groups"],
      ["capabilities.platforms.<platform>.dm, .group", "per platform", "the two above"],
    ],
  },
  doctor: checkPlugins,
});
