/**
 * Contracts of the gateway's own parts: the durable state the runner works on, the settings it reads,
 * and the port through which a turn's job gets its history, prompt and toolsets.
 */
import type { PlatformCommonConfig } from "../core/platform.js";
import type { HistoryItem, TurnJob, TurnRecord, TurnResult } from "../core/turn.js";
import type { ChatType, GroupSessionMode, InboundMessage, KeyValueStore } from "../core/types.js";
import type {
  InboundLedger,
  Outbox,
  OutboxItem,
  PairingStore,
  ResetPolicy,
  ResponseStore,
  SessionStore,
  TurnJournal,
  UsageLedger,
} from "../sessions/types.js";

/** The durable state the runner works on (`SqliteState` implements it). */
export interface RunnerState {
  sessions: SessionStore;
  ledger: InboundLedger;
  turns: TurnJournal;
  outbox: Outbox;
  pairing: PairingStore;
  /** Token usage per turn and model, written with each result when present. */
  usage?: UsageLedger | undefined;
  /** The API server's stored responses, pruned as they expire. */
  responses?: ResponseStore | undefined;
  kv(namespace: string): KeyValueStore;
  transaction<T>(fn: () => T): T;
  /** Runs `effect` once what was written so far is committed (with group commit, at the batch's end). */
  afterCommit(effect: () => void): void;
  /** Resolves once what was written so far is committed. */
  committed(): Promise<void>;
}

/** What the runner reads of the configuration (`HeraldConfig` has this shape). */
export interface RunnerSettings {
  /** IANA zone of daily resets. */
  timezone: string;
  sessions: {
    reset: Omit<ResetPolicy, "timezone">;
    groupSessions: GroupSessionMode;
    busyPolicy: "interrupt" | "queue";
  };
  model: { maxIterations: number };
  /** The default toolsets (a platform's `toolsets` overrides them). */
  agent: { toolsets: string[] };
  /** `owners` (`platform:id` or bare ids) may run owner-only commands. */
  access: { allowedUsers: string[]; allowAllUsers: boolean; owners?: string[] | undefined };
  /** Each platform's common settings, by platform name. */
  platforms: Readonly<Record<string, PlatformCommonConfig>>;
}

/** What a turn's job is built with besides the turn itself. */
export interface TurnContext {
  history: HistoryItem[];
  systemPrompt: string;
  toolsets: string[];
  /** The toolsets sent with full schemas every request (`tools.eager`); absent: all of them. */
  eagerToolsets?: string[] | undefined;
  /** The chat's voice-reply mode (`/voice`), when it has one. */
  voiceReply?: "also" | "only" | undefined;
  /** The session's own model (`/model`), unless the turn names one (a cron job's). */
  model?: string | undefined;
  /** The session's reasoning effort (`/reasoning`). */
  reasoningEffort?: "low" | "medium" | "high" | undefined;
  /** Prefetch earlier conversations for this turn (`TurnJob.recall`). */
  recall?: { maxChars: number } | undefined;
  /** Ask the memory providers about the user for this turn (`TurnJob.insights`). */
  insights?: { maxChars: number; timeoutMs: number } | undefined;
}

/**
 * Builds a turn's context when it starts (inside the runner's transaction: synchronous). The gateway's
 * composition root implements it (session history, prompt snapshot, platform toolsets).
 */
export type TurnContextSource = (turn: TurnRecord, chatType: ChatType) => TurnContext;

/** A session that just ended: by /new (`manual`) or by the reset policy. */
export interface EndedSession {
  id: string;
  key: string;
  reason: "manual" | "idle" | "daily";
}

/**
 * What the runner tells the features around it (`GatewayRunner.on`), each once what it reports is
 * committed. `turn-started`: a turn's job was handed to the queue (metrics, the dashboard).
 * `turn-finished`: its result was committed (the scheduler's run history, plugins' hooks).
 * `session-ended`: /new, /resume or the reset policy ended a session (the learning review, plans).
 * `delivery-settled`: an outbox item was delivered or failed for good (cron delivery reports).
 */
export type RunnerEvent =
  | { type: "turn-started"; job: TurnJob }
  | { type: "turn-finished"; turn: TurnRecord; result: TurnResult }
  | { type: "session-ended"; session: EndedSession }
  | { type: "delivery-settled"; item: OutboxItem; outcome: "delivered" | "failed" };

/** Something to do once the writes before it are committed (enqueue, cancel, deliver). */
export type Effect = () => void;

/**
 * Sees an inbound message from an allowed user (not a slash command) before the gateway decides on it
 * (plugins' inbound hooks). `run` resolves with the message to go on with (perhaps rewritten), or
 * undefined to drop it; it must not throw. `active()` false skips it (no hooks loaded).
 */
export interface InboundHook {
  active(): boolean;
  run(message: InboundMessage): Promise<InboundMessage | undefined>;
}
