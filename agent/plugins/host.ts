/**
 * The plugin host of one process: loads every plugin of the plugins folder, keeps the enabled ones'
 * tools (wrapped so each call gets only what its capabilities grant), commands and hooks, and reloads
 * them on demand. A plugin that fails to load is reported and skipped; the others load.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { searchKeyPrefix } from "../../core/chat.js";
import type { CommandModule, CommandResult } from "../../core/commands.js";
import { describeError, isAbortError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { TurnOrigin } from "../../core/turn.js";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { linkSdk, readDisabled } from "./enabled.js";
import type { NamedHooks } from "./hooks/types.js";
import { discoverPlugins, importPlugin, PluginLoadError, readManifest } from "./loader.js";
import type {
  Capability,
  PluginDefinition,
  PluginExec,
  PluginManifest,
  PluginTool,
  PluginToolContext,
} from "./sdk.js";
import { CAPABILITIES } from "./sdk.js";

/** The toolset of plugins' tools every admitted user's turns get. */
export const PLUGINS_TOOLSET = "plugins";

/** The toolset of the tools of plugins only owners' turns get (`plugins.owners_only`). */
export const OWNERS_PLUGINS_TOOLSET = "plugins_owners";

/** Runs a plugin's command line in a turn's workspace (the app wires the execution backend). */
export type PluginExecRunner = (
  origin: TurnOrigin,
  command: string,
  options: { timeoutMs: number; signal: AbortSignal },
) => ReturnType<PluginExec["run"]>;

/** Options of {@link PluginHost}. */
export interface PluginHostOptions {
  /** The plugins folder (`HERALD_HOME/plugins`). */
  dir: string;
  /** `HERALD_HOME` (plugins' data folders live under `plugin-data/`). */
  homeDir: string;
  logger: Logger;
  /** Capabilities plugins may have in a chat of this platform and type (config `plugins.capabilities`). */
  allowed(platform: string, chatType: "dm" | "group"): readonly Capability[];
  /** Names taken by built-in tools (a plugin tool of such a name is refused). */
  reservedTools: () => ReadonlySet<string>;
  /** Commands for `exec`; absent where no execution backend is available here. */
  exec?: PluginExecRunner | undefined;
  /**
   * The `ctx.fetch` of a plugin with `network`, by plugin name (the app wires the guarded fetch: public
   * addresses only unless the owner allows the plugin more). Called at each tool call; must not throw.
   */
  fetch(plugin: string): typeof fetch;
  /**
   * Whether only owners get the plugin's tools (toolset `plugins_owners`) and commands.
   * @defaultValue none: every admitted user gets them
   */
  ownersOnly?: ((plugin: string) => boolean) | undefined;
}

/** One plugin as `herald plugins list`, `/plugins`, `/status` and doctor show it. */
export interface PluginReport {
  name: string;
  dir: string;
  status: "loaded" | "disabled" | "failed";
  version?: string | undefined;
  capabilities: Capability[];
  tools: string[];
  commands: string[];
  hooks: string[];
  /** Why it failed: `file:line: message`. */
  error?: string | undefined;
}

interface Loaded {
  manifest: PluginManifest;
  definition: PluginDefinition;
  tools: Tool[];
}

/** Loads and serves plugins. */
export class PluginHost {
  readonly #o: PluginHostOptions;
  readonly #log: Logger;
  #loaded: Loaded[] = [];
  #reports: PluginReport[] = [];
  #generation = 0;

  constructor(options: PluginHostOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: "plugins" });
  }

  /** (Re)loads every plugin of the folder; resolves with the reports. Never throws for a plugin's fault. */
  async load(): Promise<PluginReport[]> {
    const generation = ++this.#generation;
    const disabled = readDisabled(this.#o.dir);
    const found = discoverPlugins(this.#o.dir);
    if (found.length > 0) {
      try {
        linkSdk(this.#o.dir);
      } catch (err) {
        this.#log.warn({ err: describeError(err) }, "could not link herald/plugin for plugins");
      }
    }
    const loaded: Loaded[] = [];
    const reports: PluginReport[] = [];
    const toolNames = new Set(this.#o.reservedTools());
    for (const { name, dir } of found) {
      const base: PluginReport = {
        name,
        dir,
        status: "failed",
        capabilities: [],
        tools: [],
        commands: [],
        hooks: [],
      };
      try {
        const manifest = readManifest(dir, name);
        Object.assign(base, { version: manifest.version, capabilities: manifest.capabilities });
        if (disabled.has(name)) {
          reports.push({ ...base, status: "disabled" });
          continue;
        }
        const definition = await importPlugin(dir, manifest, generation);
        const own = new Set<string>();
        const tools = (definition.tools ?? []).map((tool) => {
          if (toolNames.has(tool.name) || own.has(tool.name)) {
            throw new PluginLoadError(
              `the tool name '${tool.name}' is taken (a built-in tool or another plugin's): rename it`,
              join(dir, manifest.main),
            );
          }
          own.add(tool.name);
          return this.#wrap(manifest, tool);
        });
        for (const taken of own) toolNames.add(taken);
        loaded.push({ manifest, definition, tools });
        reports.push({
          ...base,
          status: "loaded",
          tools: tools.map((t) => t.name),
          commands: Object.keys(definition.commands ?? {}),
          hooks: Object.keys(definition.hooks ?? {}),
        });
        this.#log.info({ plugin: name, version: manifest.version }, "plugin loaded");
      } catch (err) {
        const error = err instanceof PluginLoadError ? err.describe() : `${dir}: ${describeError(err)}`;
        reports.push({ ...base, status: "failed", error });
        this.#log.error({ plugin: name, error }, "plugin failed to load and is skipped");
      }
    }
    this.#loaded = loaded;
    this.#reports = reports;
    return reports;
  }

  /** What the last load found. */
  reports(): PluginReport[] {
    return this.#reports;
  }

  /** The loaded plugins' tools, wrapped (toolset `plugins`). */
  tools(): Tool[] {
    return this.#loaded.flatMap((p) => p.tools);
  }

  /** The loaded plugins' hooks, in load order (by folder name). */
  hooks(): NamedHooks[] {
    return this.#loaded
      .filter((p) => p.definition.hooks)
      .map((p) => ({ name: p.manifest.name, hooks: p.definition.hooks! }));
  }

  /** The loaded plugins' slash commands, as a resolver (built-in commands keep their names). */
  commands(): CommandModule {
    return {
      resolvers: [
        (name, ctx): CommandResult | undefined => {
          const owner = this.#loaded.find((p) => p.definition.commands?.[name]);
          const command = owner?.definition.commands?.[name];
          if (!owner || !command) return undefined;
          if (this.#o.ownersOnly?.(owner.manifest.name) && !ctx.isOwner)
            return `/${name} is for the owner only.`;
          const { chat, chatType } = ctx.message;
          const files =
            owner.manifest.capabilities.includes("filesystem") &&
            this.#o.allowed(chat.platform, chatType).includes("filesystem");
          try {
            return command.run({
              args: ctx.args,
              chat,
              chatType,
              userId: ctx.message.sender.id,
              ...(files ? { dataDir: this.#dataDir(owner.manifest.name) } : {}),
            });
          } catch (err) {
            this.#log.warn(
              { plugin: owner.manifest.name, command: name, err: describeError(err) },
              "plugin command threw",
            );
            return `⚠️ /${name} (plugin ${owner.manifest.name}) failed: ${err instanceof Error ? err.message : String(err)}`;
          }
        },
      ],
    };
  }

  /** Descriptions of the loaded plugins' commands, for /plugins. */
  commandHelp(): string[] {
    return this.#loaded.flatMap((p) =>
      Object.entries(p.definition.commands ?? {}).map(
        ([name, c]) => `/${name} — ${c.description} (${p.manifest.name})`,
      ),
    );
  }

  /** The plugin's data folder (`HERALD_HOME/plugin-data/<name>`), created on first use. */
  #dataDir(name: string): string {
    const dir = join(this.#o.homeDir, "plugin-data", name);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** A plugin tool as the registry runs it: capability-scoped context, errors contained. */
  #wrap(manifest: PluginManifest, tool: PluginTool): Tool {
    const plugin = manifest.name;
    return {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      toolset: this.#o.ownersOnly?.(plugin) ? OWNERS_PLUGINS_TOOLSET : PLUGINS_TOOLSET,
      ...(tool.label ? { label: (args: unknown) => tool.label!(args) } : {}),
      execute: async (args: unknown, ctx: ToolContext): Promise<ToolOutput> => {
        try {
          const result = await tool.execute(args, this.#context(manifest, ctx));
          return typeof result === "string"
            ? { content: result }
            : { content: String(result.content), isError: result.isError };
        } catch (err) {
          if (isAbortError(err) || ctx.signal.aborted) throw err;
          ctx.logger.warn({ plugin, err: describeError(err) }, "plugin tool threw");
          return {
            content: `error: the ${plugin} plugin's ${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`,
            isError: true,
          };
        }
      },
    };
  }

  /** The context of one call: only the members its granted capabilities allow. */
  #context(manifest: PluginManifest, ctx: ToolContext): PluginToolContext {
    const { origin } = ctx;
    const here = new Set(this.#o.allowed(origin.chat.platform, origin.chatType));
    const declared = new Set(manifest.capabilities);
    const where = `${origin.chatType === "group" ? "groups" : "DMs"} on ${origin.chat.platform}`;
    const refused = (c: Capability): string | undefined => {
      if (!declared.has(c)) return `the ${manifest.name} plugin does not declare '${c}' in its plugin.json`;
      if (!here.has(c))
        return `'${c}' is not allowed for plugins in ${where} (config plugins.capabilities.${origin.chatType})`;
      if (c === "exec" && !this.#o.exec)
        return "'exec' is unavailable here: no execution backend (see herald doctor)";
      if (c === "send" && !ctx.state.chat)
        return "'send' is unavailable here: the gateway's outbox is not reachable";
      return undefined;
    };
    const granted = CAPABILITIES.filter((c) => refused(c) === undefined);
    const has = (c: Capability) => granted.includes(c);
    const plugin: PluginToolContext = {
      signal: ctx.signal,
      logger: ctx.logger.child({ plugin: manifest.name }),
      chat: origin.chat,
      chatType: origin.chatType,
      userId: origin.userId,
      sessionKey: origin.sessionKey,
      progress: ctx.progress,
      granted,
      refused,
    };
    if (has("network")) plugin.fetch = this.#o.fetch(manifest.name);
    if (has("filesystem")) plugin.dataDir = this.#dataDir(manifest.name);
    const exec = this.#o.exec;
    if (has("exec") && exec) {
      plugin.exec = {
        run: (command, options) =>
          exec(origin, command, { timeoutMs: options?.timeoutMs ?? 60_000, signal: ctx.signal }),
      };
    }
    const chat = ctx.state.chat;
    if (has("send") && chat) plugin.send = (text) => chat.notify(origin.chat, text);
    if (has("state")) {
      // The caller's own conversations with this chat's agent, as `session_search` reads them: never
      // another user's, nor another agent's (a further agent's keys start `<agent>/`).
      const keyPrefix = searchKeyPrefix(origin);
      plugin.state = {
        searchSessions: async (query, options) =>
          (
            await ctx.state.searchSessions(query, {
              limit: options?.limit ?? 5,
              keyPrefix,
              userId: origin.userId,
            })
          )
            // The state client filters already; this guards one that ignored the prefix.
            .filter((h) => h.sessionKey.startsWith(keyPrefix))
            .map((h) => ({
              sessionId: h.sessionId,
              role: h.role,
              snippet: h.snippet,
              createdAt: h.createdAt,
            })),
      };
    }
    return plugin;
  }
}
