/**
 * The contract of an external memory provider (Honcho, Mem0): it receives each finished exchange,
 * tells what it has learned about a user, and answers the agent's questions about that user. Built-in
 * memory (MEMORY.md, USER.md) stays as it is; providers add to it.
 */
import { HeraldError } from "../../../core/errors.js";
import type { ChatType } from "../../../core/types.js";

/**
 * The person a call is about: one user of one platform (never a group as a whole), as one agent knows
 * them. Each agent's records and reads are apart at the provider (its own Honcho workspace, its own
 * Mem0 `agent_id`), so what a user told one agent never reaches another's turns.
 */
export interface ProviderUser {
  platform: string;
  userId: string;
  userName?: string | undefined;
  /** The agent the user talks to (`agents:`); undefined: the default agent. */
  agent?: string | undefined;
}

/** One finished exchange: a person's message and the assistant's reply, after the turn committed. */
export interface Exchange extends ProviderUser {
  turnId: string;
  sessionKey: string;
  chatType: ChatType;
  userText: string;
  replyText: string;
  /** When the turn was created (epoch ms). */
  at: number;
}

/** What `herald doctor` says of a provider. */
export interface ProviderCheck {
  ok: boolean;
  text: string;
}

/**
 * One external memory provider. Every call takes a signal and may reject: the caller contains the
 * failure (a turn never waits on a provider past its time limit, and exchanges wait in the backlog).
 */
export interface MemoryProvider {
  /** `honcho`, `mem0`: in logs, the doctor and the note's header. */
  readonly name: string;
  /**
   * Records one exchange. Resolves once the provider accepted it. Rejects with a
   * {@link MemoryProviderError}; `retryable` false means this exchange will never be accepted.
   */
  addExchange(exchange: Exchange, signal: AbortSignal): Promise<void>;
  /** A few short facts about `user` for the prompt, or undefined when the provider knows nothing yet. */
  insights(user: ProviderUser, signal: AbortSignal): Promise<string | undefined>;
  /** The provider's answer to the agent's question about `user` (empty when it knows nothing). */
  query(user: ProviderUser, question: string, signal: AbortSignal): Promise<string>;
  /** Reachable, key accepted. Never rejects. */
  check(signal: AbortSignal): Promise<ProviderCheck>;
}

/** A provider's HTTP answer that was not a success, or no answer at all. */
export class MemoryProviderError extends HeraldError {
  readonly provider: string;
  /** The HTTP status; undefined when nothing answered (refused, reset, timed out). */
  readonly status: number | undefined;
  constructor(provider: string, message: string, options: { status?: number; cause?: unknown }) {
    const { status } = options;
    // A refused input (400, 404, 413, 422) will be refused again; anything else may pass later.
    const final = status !== undefined && [400, 404, 413, 422].includes(status);
    super(message, { code: "tool_error", cause: options.cause, retryable: !final });
    this.name = "MemoryProviderError";
    this.provider = provider;
    this.status = status;
  }
}
