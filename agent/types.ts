/**
 * Contracts of the agent side: tools, the state tools reach through, turn jobs and results, and the
 * queue between the gateway and the workers that run turns.
 */
import type { z } from "zod";
import type { Logger } from "../core/logger.js";
import type { ModelUsage, TurnOrigin } from "../core/turn.js";
import type { ChatRef, OutboundButton } from "../core/types.js";
import type { SearchHit, SearchOptions } from "../sessions/types.js";

/**
 * What tools need of shared state. In-process on the embedded default; over the gateway's
 * authenticated HTTP API when workers run elsewhere. This contract declares what the agent itself
 * uses; a feature adds its own optional member from its own folder, by declaration merging:
 *
 * ```ts
 * declare module "../../types.js" {
 *   interface StateClient { cron?: CronStateApi | undefined }
 * }
 * ```
 *
 * with the argument schemas of its methods beside it (see `state-methods.ts`). A member is absent where
 * the gateway does not offer it; a tool checks before it calls.
 */
export interface StateClient {
  searchSessions(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** Notices and messages to a chat outside a turn's reply (`send_message`, a background process). */
  chat?: ChatStateApi | undefined;
  /** The agent's plan per session (the `todo` tool); kept outside the history, so compression keeps it. */
  todo?: TodoStateApi | undefined;
}

/** What tools may send to a chat besides the turn's reply. */
export interface ChatStateApi {
  /** Sends a notice to `chat` through the gateway's durable outbox. */
  notify(chat: ChatRef, text: string): Promise<void>;
  /**
   * Sends a message (text and files) for the `send_message` tool through the outbox, once per `key`:
   * a second call with the same key (the turn ran again) sends nothing and says `duplicate`. `target` is
   * `origin`, `<platform>` (its home channel), `<platform>:<chat>[:<thread>]` or `email:<address>`;
   * another chat than the caller's own only for the owner. Rejects with `unauthorized` for others,
   * `invalid_input` for a target that is not one or cannot be reached.
   */
  send(caller: MessageCaller, target: string, message: ToolMessage, key: string): Promise<SendOutcome>;
}

/** Who asks to send: the turn's chat and user. */
export interface MessageCaller {
  chat: ChatRef;
  userId: string;
}

/** What `send_message` sends: Markdown text and files on the gateway's disk. */
export interface ToolMessage {
  text: string;
  files?: { path: string; fileName?: string; mimeType?: string }[] | undefined;
}

/** Where a message went, and whether an earlier call with the same key had sent it already. */
export interface SendOutcome {
  to: string;
  duplicate: boolean;
}

/** One step of the agent's plan. */
export interface TodoItem {
  /** 1-based, stable while the list lives (`clear` starts again at 1). */
  id: number;
  text: string;
  status: "pending" | "in_progress" | "done" | "cancelled";
}

/** The agent's plan of a session, by session key. */
export interface TodoStateApi {
  /** The session's items in order; empty when it has none. */
  get(sessionKey: string): Promise<TodoItem[]>;
  /** Replaces the session's items (an empty list clears it). */
  set(sessionKey: string, items: TodoItem[]): Promise<void>;
}

/** What a tool gets besides its arguments. */
export interface ToolContext {
  signal: AbortSignal;
  origin: TurnOrigin;
  /**
   * The turn and the model's id of this call: together a key that stays the same when a turn is run
   * again with the same calls (after a crash), for effects that must happen once (`send_message`).
   */
  turnId?: string | undefined;
  callId?: string | undefined;
  /** The turn's toolsets, delegation depth and model (`delegate_task` restricts its children by them). */
  turn?: { toolsets: string[]; depth: number; model?: string | undefined } | undefined;
  state: StateClient;
  logger: Logger;
  /** `HERALD_HOME`. */
  homeDir: string;
  /** Reports a progress line ("searching sessions for 'deploy'") to the user's chat. Must not throw. */
  progress(line: string): void;
  /**
   * Lends the turn's queue slot while `work` is pending (the tool only waits for other jobs, as
   * `delegate_task` for its children); both queues lend. Absent when the turn runs outside a queue.
   */
  idle?: (<T>(work: Promise<T>) => Promise<T>) | undefined;
  /**
   * Runs another tool of the turn as the loop runs a call of the model's (the plugins' hooks, the
   * chat's progress lines, errors turned into a result), for tools that call tools (`execute_code`).
   * `tools` narrows which of the turn's tools may run. Never throws except on abort. Absent outside
   * the loop.
   */
  callTool?:
    | ((
        call: { id: string; name: string; arguments: string },
        options: { signal: AbortSignal; tools?: (tool: Tool) => boolean },
      ) => Promise<ToolOutput>)
    | undefined;
}

/** A tool's answer. Plain text for the model; `files` are sent to the user with the reply. */
export interface ToolOutput {
  content: string;
  files?: { path: string; fileName?: string; mimeType?: string; voice?: boolean }[] | undefined;
  isError?: boolean | undefined;
  /**
   * Model calls the tool made itself (an images endpoint), added to the turn's usage per model, so
   * `/usage` counts them.
   */
  usage?: ModelUsage[] | undefined;
  /**
   * Ends the turn after this step with this text as the reply (the tool asked the user something, e.g.
   * an approval, and the answer starts the next turn): no slot is held while the user thinks.
   */
  stopTurn?: string | undefined;
  /**
   * Buttons under the `stopTurn` text (an approval's Approve / Deny, a question's choices); a click
   * comes back as the user's next message with the button's `data`. Ignored without `stopTurn`.
   */
  buttons?: OutboundButton[][] | undefined;
}

/**
 * One tool. `execute` may throw: the loop turns the error into a tool result the model sees
 * ("error: …"); it must honour `ctx.signal`.
 */
export interface Tool<P extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: P;
  /** The toolset this tool belongs to (toolsets are enabled per platform). */
  toolset: string;
  /**
   * The tool may change the session's workspace (writes files, runs commands): the turn's first such
   * call is preceded by a checkpoint of the workspace (`ToolRunDeps.beforeChange`). @defaultValue false
   */
  changesWorkspace?: boolean | undefined;
  /**
   * How the chat's progress line names a call (`$ npm test`, `read_file src/x.ts`). Gets the arguments
   * as the model sent them (not yet validated); may throw (the generic line is shown instead).
   * @defaultValue `⚙️ <name>: <arguments>`
   */
  label?(args: z.infer<P>): string;
  /**
   * The arguments' JSON Schema as the model gets it, when it comes from elsewhere (an MCP server's
   * tool); `parameters` then only checks the arguments are an object and the tool's owner validates.
   * @defaultValue converted from `parameters`
   */
  jsonSchema?: Record<string, unknown> | undefined;
  /**
   * The tool as a session's agent has it: another declaration of it (the terminal tool's description
   * names the agent's own backend), or undefined where the agent does not have it. Must give the same
   * object for every session of one agent, so its requests keep one stable prefix; must not throw.
   * @defaultValue the tool itself, for every session
   */
  forSession?(sessionKey: string): Tool | undefined;
  execute(args: z.infer<P>, ctx: ToolContext): Promise<ToolOutput | string>;
}

/**
 * Filters the loop calls around tools and before the reply (plugins' hooks). Implementations contain
 * their own errors and time limits: no member throws.
 */
export interface TurnHooks {
  /** Whether any hook waits at `point` (the loop skips the call otherwise). */
  has(point: "beforeToolCall" | "afterToolCall" | "beforeReply"): boolean;
  /** A reason to refuse the call (the model reads it as the tool's error), or undefined to run it. */
  beforeToolCall(tool: string, args: unknown, origin: TurnOrigin): Promise<string | undefined>;
  /** The result text the model reads (the same text when nothing rewrote it). */
  afterToolCall(
    tool: string,
    args: unknown,
    result: { content: string; isError: boolean },
    origin: TurnOrigin,
  ): Promise<string>;
  /** The reply as it is stored and sent. */
  beforeReply(text: string, origin: TurnOrigin): Promise<string>;
}
