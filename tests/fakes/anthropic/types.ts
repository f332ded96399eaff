/**
 * Types of the fake Anthropic Messages API (tests/fakes/anthropic): scripted answers and what the fake
 * recorded.
 */

/** A content block of a request, loosely typed: tests read what they need. */
export interface FakeAnthropicBlock {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  source?: { type: string; media_type?: string; data?: string; url?: string };
  cache_control?: { type: string };
  [key: string]: unknown;
}

/** A Messages request body as the fake received it. */
export interface FakeAnthropicRequest {
  model: string;
  max_tokens: number;
  stream?: boolean;
  system?: string | FakeAnthropicBlock[];
  tools?: { name: string; description?: string; input_schema: unknown; cache_control?: { type: string } }[];
  thinking?: { type: string; budget_tokens?: number };
  messages: { role: string; content: string | FakeAnthropicBlock[] }[];
  [key: string]: unknown;
}

/** One scripted answer. */
export interface FakeAnthropicStep {
  /** Answer text (streamed in `pieces` deltas). */
  text?: string;
  /** A thinking block before the answer, signed by the fake (sent only when the request asks for thinking). */
  thinking?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown>; id?: string }[];
  /** An HTTP error with Anthropic's body; `retryAfterSeconds` sets `retry-after`. */
  error?: { status: number; type?: string; message?: string; retryAfterSeconds?: number };
  /** An `error` event after the first text delta (overloaded mid-answer). */
  streamError?: { type: string; message: string };
  /** `stop_reason: "refusal"` with no content. */
  refusal?: boolean;
  /** Text deltas per block. @defaultValue 3 */
  pieces?: number;
}

export type FakeAnthropicHandler = (request: FakeAnthropicRequest) => FakeAnthropicStep;

/** The usage reported for one answered request. */
export interface FakeAnthropicUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  output_tokens: number;
}

export interface FakeAnthropic {
  /** Base URL without `/v1` (the SDK's `baseURL`, a provider's `base_url`). */
  readonly url: string;
  readonly requests: FakeAnthropicRequest[];
  /** Each request's raw body. */
  readonly bodies: string[];
  readonly headers: Record<string, string | string[] | undefined>[];
  /** Usage of each answered request, in order. */
  readonly usages: FakeAnthropicUsage[];
  /** Requests refused as the real API would refuse them (400), with the reason. */
  readonly rejected: string[];
  script(...steps: (FakeAnthropicStep | FakeAnthropicHandler)[]): void;
  setDefault(handler: FakeAnthropicHandler): void;
  pending(): number;
  close(): Promise<void>;
}
