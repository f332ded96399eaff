/**
 * Contracts of the agent side: tools, the state tools reach through, turn jobs and results, and the
 * queue between the gateway and the workers that run turns.
 */
import type { z } from "zod";
import type { Logger } from "../core/logger.js";
import type { TurnOrigin } from "../core/turn.js";
import type { ChatRef, OutboundButton } from "../core/types.js";
import type { CronStateApi } from "../scheduler/types.js";
import type { SearchHit, SearchOptions } from "../sessions/types.js";
import type { MemoryStateApi } from "../skills/memory/types.js";
import type { SkillsStateApi } from "../skills/types.js";
import type { ApprovalAsk, ApprovalsStateApi } from "./exec/approvals/requests.js";

/**
 * What tools need of shared state. In-process on the embedded default; over the gateway's
 * authenticated HTTP API when workers run elsewhere. Later features add optional members.
 */
export interface StateClient {
  searchSessions(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** Cron jobs (the `cronjob` tool); absent where no scheduler is reachable. */
  cron?: CronStateApi | undefined;
  /** MEMORY.md and USER.md (the `memory` tool); absent where memory is not reachable. */
  memory?: MemoryStateApi | undefined;
  /** Skills (the `skills_list`, `skill_view`, `skill_manage` tools). */
  skills?: SkillsStateApi | undefined;
  /** Approval requests of dangerous commands (the `terminal` tool). */
  approvals?: ApprovalsStateApi | undefined;
  /** Notices to a chat outside a turn's reply (a background process finished). */
  chat?: ChatStateApi | undefined;
  /** The agent's plan per session (the `todo` tool); kept outside the history, so compression keeps it. */
  todo?: TodoStateApi | undefined;
  /** Child turns of `delegate_task`, kept by the gateway (durable, once per task). */
  delegate?: DelegateStateApi | undefined;
  /** The shared task board (`task_board`, `herald tasks`). */
  taskBoard?: TaskBoardStateApi | undefined;
  /** Later: send_message. Optional so the contract grows without breaking. */
  [extension: string]: unknown;
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

/** One task of `delegate_task`. */
export interface DelegateTask {
  goal: string;
  /** What the parent passes along: the child sees nothing else of the conversation. */
  context?: string | undefined;
  /** The toolsets the child asks for; only those the parent has are granted. */
  toolsets?: string[] | undefined;
}

/** The turn and call that delegate, as the gateway keys the children by them. */
export interface DelegateParent {
  turnId: string;
  callId: string;
  origin: TurnOrigin;
  /** The parent's toolsets: a child never gets more. */
  toolsets: string[];
  /** 0 for a chat's own turn. */
  depth: number;
  model?: string | undefined;
}

/** A child's state as the parent sees it. `done`, `failed` and `cancelled` are final. */
export interface DelegateChild {
  index: number;
  id: string;
  goal: string;
  state: "waiting" | "running" | "done" | "failed" | "cancelled";
  /** The child's last answer (done), or what went wrong (failed, cancelled). */
  summary?: string | undefined;
  files?: { path: string; fileName?: string | undefined }[] | undefined;
  /** The model that answered (which worker ran it, when workers differ by model). */
  model?: string | undefined;
}

/** A `delegate_task` call's children. `version` grows with every change of a child's state. */
export interface DelegateGroup {
  id: string;
  version: number;
  children: DelegateChild[];
}

/** Child turns of `delegate_task`, kept and run by the gateway on its job queue. */
export interface DelegateStateApi {
  /**
   * Starts the children of one call; idempotent by parent turn and tasks (a parent run again after a
   * crash that asks for the same tasks gets the same children, never new ones). Rejects with
   * `invalid_input` past the depth limit.
   */
  start(parent: DelegateParent, tasks: DelegateTask[], maxParallel?: number): Promise<DelegateGroup>;
  /** Resolves when the group's version passes `seenVersion`, or after `waitMs`, with the group. */
  wait(groupId: string, seenVersion: number, waitMs: number): Promise<DelegateGroup>;
  /**
   * Cancels the group's unfinished children (on any worker) when their parent is over (cancelled,
   * ended); a parent aborted by a shutdown stays open, runs again and keeps them.
   */
  cancel(groupId: string): Promise<void>;
}

/** A task of the shared board. */
export interface BoardTask {
  id: number;
  title: string;
  details?: string | undefined;
  state: "todo" | "claimed" | "done" | "failed";
  owner?: string | undefined;
  result?: string | undefined;
  /** Until when a claim holds (epoch ms) unless the claiming turn renews it. */
  claimExpiresAt?: number | undefined;
  createdAt: number;
  updatedAt: number;
}

/** Who acts on the board: a name people read, and the turn whose end releases its claims. */
export interface BoardActor {
  owner: string;
  turnId?: string | undefined;
}

/** The shared task board, stored by the gateway; claims are atomic across every worker. */
export interface TaskBoardStateApi {
  create(task: { title: string; details?: string | undefined }, actor: BoardActor): Promise<BoardTask>;
  /** Claims `id`, or the oldest claimable task; undefined when none is free. */
  claim(actor: BoardActor, id?: number): Promise<BoardTask | undefined>;
  /** Changes a task's title, details or result (a claim is renewed). */
  update(
    id: number,
    change: { title?: string | undefined; details?: string | undefined; result?: string | undefined },
    actor: BoardActor,
  ): Promise<BoardTask>;
  /** Ends a task as done or failed with its result. */
  complete(id: number, outcome: "done" | "failed", result: string, actor: BoardActor): Promise<BoardTask>;
  list(filter?: { state?: BoardTask["state"] | undefined; limit?: number | undefined }): Promise<BoardTask[]>;
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
}

/** A tool's answer. Plain text for the model; `files` are sent to the user with the reply. */
export interface ToolOutput {
  content: string;
  files?: { path: string; fileName?: string; mimeType?: string; voice?: boolean }[] | undefined;
  isError?: boolean | undefined;
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
  /**
   * The call did not run: it needs a person's approval first (a dangerous command). The loop records
   * the request with this call and the rest of its step, and ends the turn with the prompt; the answer
   * starts a turn that resumes here (`TurnJob.resume`), where an approved call is run by Herald itself
   * and its output becomes this call's result. `content` is what a `delegate_task` child's model reads.
   */
  approval?: ApprovalAsk | undefined;
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
