/**
 * The turn contracts between the gateway and the workers: who a turn is for, the job a worker runs,
 * the result it returns, its progress, and the queue between them.
 */
import type { HeraldErrorCode } from "./errors.js";
import type {
  ChatMessage,
  ChatRef,
  ChatType,
  ClientTool,
  ClientToolCalls,
  ClientToolResults,
  InboundAttachment,
  InboundMessage,
  OutboundButton,
  ToolCall,
} from "./types.js";

/** Who and where a turn runs for; tools see this, never the adapter. */
export interface TurnOrigin {
  sessionId: string;
  sessionKey: string;
  chat: ChatRef;
  chatType: ChatType;
  userId: string;
  userName?: string | undefined;
}

/** A user turn's input: text plus files. */
export interface TurnInput {
  text: string;
  attachments?: InboundAttachment[] | undefined;
  /** The client's outputs of an earlier turn's client calls: the turn opens with that step (text may be empty). */
  clientResults?: ClientToolResults | undefined;
}

/**
 * A turn that resumes one held for a person's answer (a command that needed approval): instead of a
 * user message it starts with the held tool call's result, and the model carries on from there.
 */
export interface TurnResume {
  /** The approval request that was answered. */
  approvalId: string;
  /** `approved`: the worker runs the held call now; `denied`, `lapsed`: it is not run, and its result says why. */
  answer: "approved" | "denied" | "lapsed";
  /** Who answered, as the result names them ("the user", "the owner from the dashboard"). */
  by: string;
  /** The held call, exactly as the model made it. */
  call: ToolCall;
  /**
   * The step the call was held in: the assistant message with its calls, then one result per call in
   * order (the held call's a placeholder this turn replaces). Absent when the call is not part of the
   * session's history (a `delegate_task` child's): the turn adds the call as a step of its own.
   */
  step?: ChatMessage[] | undefined;
}

/** Everything a worker needs to run one turn; no worker reads gateway state to start. */
export interface TurnJob {
  kind: "turn";
  turnId: string;
  origin: TurnOrigin;
  /** The session's messages before this turn (already compacted where it was), with their seqs. */
  history: HistoryItem[];
  input: TurnInput;
  /** Set when the turn resumes a held call instead of answering `input` (`input` is then unused). */
  resume?: TurnResume | undefined;
  /** System prompt pieces the gateway assembled (persona, platform hints, memory snapshot, skills index). */
  systemPrompt: string;
  toolsets: string[];
  /**
   * Of `toolsets`, those whose schemas every request carries; the rest are listed in the system prompt
   * and loaded on demand (`load_tools`, agent/lazy-tools.ts). Absent: every schema every request.
   */
  eagerToolsets?: string[] | undefined;
  /** Overrides the configured model for this turn (cron jobs). */
  model?: string | undefined;
  /** @defaultValue the configured cap (90) */
  maxIterations?: number | undefined;
  /** Send the reply's text as it streams (`text-delta` progress): someone shows it as it is written. */
  streamText?: boolean | undefined;
  /**
   * The chat asked for spoken replies (`/voice on`: `also`, `/voice only`: `only`): the worker adds the
   * reply as a voice note, and with `only` sends no text.
   */
  voiceReply?: "also" | "only" | undefined;
  /** Reasoning effort the session asked for (`/reasoning`); sent only to models that declare support. */
  reasoningEffort?: "low" | "medium" | "high" | undefined;
  /** Set on a `delegate_task` child: its parent's turn and its depth (the parent's depth + 1). */
  delegation?: { parentTurnId: string; depth: number } | undefined;
  /** Function tools the API client runs itself: calling one ends the turn with the calls for the client. */
  clientTools?: ClientTool[] | undefined;
  /** Tools of the toolsets this turn does without (a child has no `todo` or `clarify`: the chat's). */
  excludedTools?: string[] | undefined;
  /**
   * The message seems to refer to earlier conversations and recall prefetch is on for its platform: the
   * worker searches them (`StateClient.searchSessions`, the caller's scope) before the first model call
   * and adds what it found, at most `maxChars`, as a note before the user's message.
   */
  recall?: { maxChars: number } | undefined;
  /**
   * External memory providers are configured and this turn answers a person: the worker asks the
   * gateway what they know about the user (`StateClient.memoryProviders`), waits at most `timeoutMs`,
   * and adds the answer, at most `maxChars`, as a note before the user's message.
   */
  insights?: { maxChars: number; timeoutMs: number } | undefined;
  createdAt: number;
}

/** A compaction the worker did: every history message with `seq <= uptoSeq` is replaced by `summary`. */
export interface Compaction {
  /** The seq of the last history message the summary covers (earlier summaries included). */
  uptoSeq: number;
  summary: string;
}

/** A message of a session's history with its place in the session (`seq`, as the store numbers it). */
export interface HistoryItem {
  seq: number;
  message: ChatMessage;
}

export interface TurnUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the provider served from its prompt cache (`prompt_tokens_details.cached_tokens`). */
  cachedTokens?: number | undefined;
  modelCalls: number;
  toolCalls: number;
  /** The same, per model that answered (`provider/model`), compression and fallbacks included. */
  byModel?: ModelUsage[] | undefined;
}

/** Tokens of the calls of one model within a turn. */
export interface ModelUsage {
  /** `provider/model`. */
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (Anthropic); absent from older workers. */
  cacheWriteTokens?: number | undefined;
  /** Output tokens spent reasoning, part of `completionTokens`, where the API says. */
  reasoningTokens?: number | undefined;
  calls: number;
}

/** A provider refused the key (401/403) during a turn: the gateway tells the owner, once. */
export interface ProviderAlert {
  provider: string;
  model: string;
  status: number;
  /** What the owner reads: which key to check. */
  message: string;
}

/** What a worker returns. `messages` are appended to the session in order (user message first). */
export type TurnResult =
  | {
      kind: "ok";
      turnId: string;
      messages: ChatMessage[];
      reply: {
        text: string;
        files?: { path: string; fileName?: string; mimeType?: string; voice?: boolean }[] | undefined;
        /** Buttons under the reply (a tool asked the user something: `ToolOutput.buttons`). */
        buttons?: OutboundButton[][] | undefined;
        /** The turn ended calling the client's own tools (`TurnJob.clientTools`); it runs them. */
        clientCalls?: ClientToolCalls | undefined;
      };
      compaction?: Compaction | undefined;
      usage: TurnUsage;
      model: string;
      /** Providers that refused their key on the way (a fallback answered). */
      alerts?: ProviderAlert[] | undefined;
    }
  | {
      kind: "failed";
      turnId: string;
      /** What to tell the user (already phrased for a user). */
      userMessage: string;
      error: string;
      retryable: boolean;
      /** The failure's `HeraldError` code when it had one (the API server answers an HTTP status by it). */
      code?: HeraldErrorCode | undefined;
      /** How long the model endpoint asked to wait (its Retry-After), when it said. */
      retryAfterMs?: number | undefined;
      /** Messages to keep anyway (the user's message), so context is not lost. */
      messages: ChatMessage[];
      /** Tokens the turn's model calls used before it failed. */
      usage?: TurnUsage | undefined;
      alerts?: ProviderAlert[] | undefined;
    };

/** Progress a running turn reports. */
export type TurnProgress =
  | { type: "text-delta"; turnId: string; text: string }
  | {
      type: "tool-start";
      turnId: string;
      callId: string;
      name: string;
      summary: string;
      /** The tool's own progress line for this call, when it has one. */
      label?: string | undefined;
    }
  | {
      type: "tool-end";
      turnId: string;
      callId: string;
      name: string;
      ok: boolean;
      durationMs: number;
      /** The start of the call's output (its first lines, at most 300 characters), for clients that show it. */
      result?: string | undefined;
    }
  | { type: "status"; turnId: string; text: string };

/** Events the gateway receives from the queue. */
export type QueueEvent =
  | { type: "progress"; jobId: string; progress: TurnProgress }
  | { type: "completed"; jobId: string; result: TurnResult }
  | {
      type: "failed";
      jobId: string;
      error: string;
      retryable: boolean;
      /** `turn_crashed`: the process running the job ended during it too often; it was not run again. */
      code?: HeraldErrorCode | undefined;
    };

/** Runs one job; rejects only for failures the queue should retry. */
export type JobHandler = (
  job: TurnJob,
  ctx: {
    signal: AbortSignal;
    progress(event: TurnProgress): void;
    /**
     * Lends the job's slot to other jobs while `work` is pending (the job only waits: a parent for its
     * `delegate_task` children, which may need that slot) and takes it back when `work` settles, even
     * past the cap for a moment. Every backend passes it (the contract suite checks); optional for
     * handlers called outside a queue. Rejects as `work` does.
     */
    idle?: (<T>(work: Promise<T>) => Promise<T>) | undefined;
  },
) => Promise<TurnResult>;

/**
 * Moves turn jobs from the gateway to workers. At most one job per `orderingKey` runs at a time, in
 * enqueue order, in every backend.
 */
export interface JobQueue {
  /**
   * Adds a job. Idempotent by `id`: a job already known is not added again, and if it already completed
   * its `completed` event is emitted again so a restarted gateway still gets the result.
   */
  enqueue(job: TurnJob, options: { id: string; orderingKey: string }): Promise<void>;
  /** Starts taking jobs (worker side). `concurrency` caps jobs in flight in this consumer. */
  consume(handler: JobHandler, options?: { concurrency?: number }): Promise<void>;
  /** Gateway side: progress and results of all jobs. Returns an unsubscribe function. */
  subscribe(listener: (event: QueueEvent) => void): () => void;
  /** Aborts a queued or running job; its result, if any, is not emitted. */
  cancel(jobId: string): Promise<void>;
  /** Jobs waiting and running now (for /health and /metrics). */
  stats(): Promise<{ waiting: number; active: number; workers: number }>;
  close(): Promise<void>;
  /**
   * Gateway side, where workers run in other processes: tells every consumer listening now (a worker
   * disconnected at that moment misses it). Resolves with how many heard it (0: no worker listens);
   * rejects when it could not be sent (the queue is closed, Redis refused it).
   */
  announce?(event: WorkerAnnouncement): Promise<number>;
  /**
   * Worker side: hears `announce`, from this call on. A message that is not a valid announcement is
   * logged and skipped. The listener must not throw. Returns an unsubscribe function.
   */
  onAnnouncement?(listener: (event: WorkerAnnouncement) => void): () => void;
}

/** What the gateway tells every worker process at once (`JobQueue.announce`). */
export type WorkerAnnouncement =
  /** A session ended (/new, /reset, idle or daily): the background processes its turns started end. */
  | { type: "session-ended"; sessionKey: string; sessionId?: string | undefined }
  /** `/reload-mcp` or `/reload-plugins`: reload the MCP servers (config.yaml read again) or the plugins. */
  | { type: "reload"; what: "mcp" | "plugins" };

/** The reply text that means "deliver nothing" (a scheduled job with nothing to report). */
export const SILENT_REPLY = "[SILENT]";

/** Whether a reply delivers nothing: `[SILENT]`, or no text and no files. */
export function isSilent(reply: { text: string; files?: readonly unknown[] | undefined }): boolean {
  const text = reply.text.trim();
  return text === SILENT_REPLY || (!text && !reply.files?.length);
}

export type TurnStatus = "pending" | "running" | "done" | "cancelled" | "failed";

/** What starts a turn: a chat message, a scheduled job, an API call or an inbound webhook. */
export type TurnSource = "chat" | "cron" | "api" | "webhook";

/** A scheduled job's run, as its turn carries it. */
export interface CronTurnOrigin {
  jobId: string;
  runId: string;
  /** Where the reply goes, each with the target as the job wrote it (`telegram`, `origin`…). */
  targets: { chat: ChatRef; spec: string }[];
  /** The subject line where the platform has one (email): the job's name. */
  subject?: string | undefined;
}

/** What a turn may run with instead of its platform's defaults. */
export interface TurnOptions {
  toolsets?: string[] | undefined;
  model?: string | undefined;
  /** Put before the delivered reply (not the stored one): a background task names itself. */
  replyPrefix?: string | undefined;
}

/** A turn as the journal keeps it. */
export interface TurnRecord {
  id: string;
  sessionId: string;
  sessionKey: string;
  chat: ChatRef;
  userId: string;
  status: TurnStatus;
  source: TurnSource;
  /**
   * The user's text (already including any skill or command expansion; in a shared group session with
   * its sender's tag in front, `core/speakers.ts`).
   */
  input: string;
  /** The inbound message this turn answers (null for cron runs). */
  inbound?: InboundMessage | undefined;
  /** Set for a scheduled job's run: which job and run, and where its reply goes. */
  cron?: CronTurnOrigin | undefined;
  /** Overrides of this turn (a cron job's toolsets and model). */
  options?: TurnOptions | undefined;
  /** Set when the turn resumes a call held for approval (`input` then only describes the answer). */
  resume?: TurnResume | undefined;
  /**
   * Runs started and not handed back by a clean stop: a turn still running at start with two of them
   * ended the process twice and is failed rather than run a third time.
   */
  attempts: number;
  createdAt: number;
  startedAt?: number | undefined;
  finishedAt?: number | undefined;
  error?: string | undefined;
}

/** A turn to create outside the inbound path (a scheduled job's run). */
export type NewTurn = Omit<TurnRecord, "status" | "attempts" | "createdAt">;

/**
 * What commands and the scheduler may do to turns and sessions: the gateway's narrow port. Each call is
 * durable with the caller's transaction if one is open (a command's), else on its own; what it sets off
 * (enqueueing, cancelling a running job, delivering) runs after that commit.
 */
export interface TurnControl {
  /** Creates a turn and starts it as soon as its session is free. Idempotent by turn id. */
  submit(turn: NewTurn): TurnRecord;
  /**
   * Cancels every open turn of a session key. With `keepInput` the user's text of each cancelled turn
   * stays in the session, so the next turn still sees it. Returns how many were cancelled.
   */
  cancel(sessionKey: string, reason: string, options?: { keepInput?: boolean }): number;
  /** Ends the active session of a key (its open turns cancelled); false when it had none. */
  reset(sessionKey: string): boolean;
  /** Sends a notice to a chat through the durable outbox (with buttons under it, when given). */
  notify(chat: ChatRef, text: string, options?: { buttons?: OutboundButton[][] | undefined }): void;
  /** Open (running or waiting) turns of a session key, oldest first. */
  openTurns(sessionKey: string): TurnRecord[];
  /** Whether the platform's adapter is running here (so a delivery to it can work). */
  isRunning(platform: string): boolean;
}

/**
 * The gateway's events a feature follows (the runner's `on`; see gateway/runner-events.ts). `E` names
 * the events the feature subscribes to, each with the fields it reads: `{ type: "session-ended";
 * session: { key: string } }`. `on` returns the unsubscribe; a handler must not throw (a throw is
 * logged where the event is emitted, and the other handlers still hear it).
 */
export interface GatewayEvents<E extends { type: string }> {
  on<T extends E["type"]>(type: T, handler: (event: Extract<E, { type: T }>) => void): () => void;
}
