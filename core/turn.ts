/**
 * The turn contracts between the gateway and the workers: who a turn is for, the job a worker runs,
 * the result it returns, its progress, and the queue between them.
 */
import type { ChatMessage, ChatRef, ChatType, InboundAttachment } from "./types.js";

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
}

/** Everything a worker needs to run one turn; no worker reads gateway state to start. */
export interface TurnJob {
  kind: "turn";
  turnId: string;
  origin: TurnOrigin;
  /** The session's messages before this turn (already compacted where it was). */
  history: ChatMessage[];
  input: TurnInput;
  /** System prompt pieces the gateway assembled (persona, platform hints, memory snapshot, skills index). */
  systemPrompt: string;
  toolsets: string[];
  /** Overrides the configured model for this turn (cron jobs). */
  model?: string | undefined;
  /** @defaultValue the configured cap (90) */
  maxIterations?: number | undefined;
  /** Send the reply's text as it streams (`text-delta` progress): someone shows it as it is written. */
  streamText?: boolean | undefined;
  createdAt: number;
}

/** A compaction the worker did: messages up to `uptoSeq` of history are replaced by `summary`. */
export interface Compaction {
  /** Number of leading history messages (after any system message) that the summary replaces. */
  replacedCount: number;
  summary: string;
}

export interface TurnUsage {
  promptTokens: number;
  completionTokens: number;
  modelCalls: number;
  toolCalls: number;
}

/** What a worker returns. `messages` are appended to the session in order (user message first). */
export type TurnResult =
  | {
      kind: "ok";
      turnId: string;
      messages: ChatMessage[];
      reply: { text: string; files?: { path: string; fileName?: string; mimeType?: string }[] | undefined };
      compaction?: Compaction | undefined;
      usage: TurnUsage;
      model: string;
    }
  | {
      kind: "failed";
      turnId: string;
      /** What to tell the user (already phrased for a user). */
      userMessage: string;
      error: string;
      retryable: boolean;
      /** Messages to keep anyway (the user's message), so context is not lost. */
      messages: ChatMessage[];
    };

/** Progress a running turn reports. */
export type TurnProgress =
  | { type: "text-delta"; turnId: string; text: string }
  | { type: "tool-start"; turnId: string; callId: string; name: string; summary: string }
  | { type: "tool-end"; turnId: string; callId: string; name: string; ok: boolean; durationMs: number }
  | { type: "status"; turnId: string; text: string };

/** Events the gateway receives from the queue. */
export type QueueEvent =
  | { type: "progress"; jobId: string; progress: TurnProgress }
  | { type: "completed"; jobId: string; result: TurnResult }
  | { type: "failed"; jobId: string; error: string; retryable: boolean };

/** Runs one job; rejects only for failures the queue should retry. */
export type JobHandler = (
  job: TurnJob,
  ctx: { signal: AbortSignal; progress(event: TurnProgress): void },
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
}
