/**
 * The public module plugin authors import (`import { definePlugin, z } from "herald/plugin"`): the shape
 * of a plugin, its tools, commands and hooks, and the context a tool gets. At run time `definePlugin`
 * returns its argument; the types are what give completion.
 */
import type { z } from "zod";
import type { Logger } from "../../core/logger.js";
import type { Hooks } from "./hooks/types.js";

export { z } from "zod";
export type * from "./hooks/types.js";

/** What a plugin may ask for in `plugin.json`. */
export const CAPABILITIES = ["network", "filesystem", "exec", "state", "send"] as const;

/** One capability: `network` (ctx.fetch), `filesystem` (ctx.dataDir), `exec` (ctx.exec), `state`, `send`. */
export type Capability = (typeof CAPABILITIES)[number];

/** Runs a command in the conversation's workspace, on the execution backend of the conversation's agent (sandbox by default). */
export interface PluginExec {
  run(
    command: string,
    options?: { timeoutMs?: number },
  ): Promise<{ exitCode: number | null; stdout: string; stderr: string; timedOut: boolean }>;
}

/** Shared state a plugin with `state` may read. */
export interface PluginState {
  /**
   * Full-text search over the messages of the caller's own sessions on this chat's platform (or bot
   * account) with this chat's agent, as the `session_search` tool sees them: never another user's,
   * nor another agent's.
   */
  searchSessions(
    query: string,
    options?: { limit?: number },
  ): Promise<{ sessionId: string; role: string; snippet: string; createdAt: number }[]>;
}

/**
 * What a plugin's tool gets besides its arguments. A member tied to a capability is present only when
 * the plugin declared it in `plugin.json` AND this chat allows it (`plugins.capabilities`: groups get
 * less than DMs by default); `refused(capability)` says why one is missing.
 */
export interface PluginToolContext {
  /** Aborts on /stop and when the turn is cancelled: honour it. */
  signal: AbortSignal;
  logger: Logger;
  chat: { platform: string; chatId: string; threadId?: string | undefined };
  chatType: "dm" | "group";
  userId: string;
  sessionKey: string;
  /** A progress line in the user's chat. Never throws. */
  progress(line: string): void;
  /** The capabilities this call has. */
  granted: readonly Capability[];
  /** Why `capability` is not granted here, or undefined when it is. */
  refused(capability: Capability): string | undefined;
  /**
   * `network`: a fetch (any method, headers, body; the response streams) whose connections, redirects
   * included, reach only public addresses unless the owner allows this plugin private ones. A refused
   * request rejects with an error naming the host, its address and how to allow it.
   */
  fetch?: typeof fetch | undefined;
  /** `filesystem`: a folder of the plugin's own (`HERALD_HOME/plugin-data/<name>`), created on first use. */
  dataDir?: string | undefined;
  /** `exec`: commands in the conversation's workspace, on the execution backend. */
  exec?: PluginExec | undefined;
  /** `send`: a message to this chat through the durable outbox (besides the turn's reply). */
  send?: ((text: string) => Promise<void>) | undefined;
  /** `state`: shared state (session search). */
  state?: PluginState | undefined;
}

/** What a plugin tool returns: text for the model, or text marked as an error. */
export type PluginToolResult = string | { content: string; isError?: boolean };

/**
 * A tool the model can call. `execute` may throw: that call fails (the model reads the error), never
 * the turn or the process.
 */
export interface PluginTool<P extends z.ZodType = z.ZodType> {
  /** Lowercase letters, digits and `_`; must not clash with a built-in tool or another plugin's. */
  name: string;
  description: string;
  /** The arguments' zod schema (use the `z` exported here). */
  parameters: P;
  /** The chat's progress line for a call. */
  label?(args: z.infer<P>): string;
  execute(args: z.infer<P>, ctx: PluginToolContext): Promise<PluginToolResult> | PluginToolResult;
}

/** What a plugin command sees. */
export interface PluginCommandContext {
  /** The text after `/name`. */
  args: string;
  chat: { platform: string; chatId: string; threadId?: string | undefined };
  chatType: "dm" | "group";
  userId: string;
  /** `filesystem` (declared and allowed in this chat): the plugin's data folder, as tools get it. */
  dataDir?: string | undefined;
}

/**
 * A slash command. `run` is synchronous (it runs inside the gateway's inbound transaction) and returns
 * the reply, or undefined to let the message go to the model. A throw is answered with an error line.
 * Built-in commands win over a plugin's of the same name.
 */
export interface PluginCommand {
  description: string;
  run(ctx: PluginCommandContext): string | undefined;
}

/** What a plugin's entry module default-exports. */
export interface PluginDefinition {
  tools?: PluginTool[] | undefined;
  /** By command name, without the slash. */
  commands?: Record<string, PluginCommand> | undefined;
  hooks?: Hooks | undefined;
}

/** Declares a plugin (the entry's default export). Returns its argument: the types are the point. */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition;
}

/** Declares one tool with its argument type inferred from its zod schema. */
export function defineTool<P extends z.ZodType>(tool: PluginTool<P>): PluginTool {
  return tool as unknown as PluginTool;
}

/** What `plugin.json` holds. */
export interface PluginManifest {
  name: string;
  version: string;
  description?: string | undefined;
  /** @defaultValue [] */
  capabilities: Capability[];
  /** The ESM entry, relative to the plugin's folder. @defaultValue "index.js" */
  main: string;
}
