/** Types of the fake OpenAI Responses API (tests/fakes/openai-responses). */

/** An input item of a request, loosely typed: tests read what they need. */
export interface FakeResponsesItem {
  type?: string;
  role?: string;
  content?: string | { type: string; text?: string; image_url?: string }[];
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string;
  id?: string;
  encrypted_content?: string;
  summary?: unknown[];
  [key: string]: unknown;
}

/** A `POST /v1/responses` body as the fake received it. */
export interface FakeResponsesRequest {
  model: string;
  input: string | FakeResponsesItem[];
  instructions?: string;
  stream?: boolean;
  store?: boolean;
  include?: string[];
  reasoning?: { effort?: string; summary?: string };
  tools?: { type: string; name: string; description?: string; parameters?: unknown }[];
  [key: string]: unknown;
}

/** One scripted answer. */
export interface FakeResponsesStep {
  text?: string;
  /** A reasoning item before the answer (its summary text; encrypted content made by the fake). */
  reasoning?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown>; id?: string }[];
  error?: { status: number; message?: string; code?: string; retryAfterSeconds?: number };
  /** A refusal content part instead of text. */
  refusal?: string;
  /** A `response.failed` event after the first text delta. */
  failMidStream?: { code: string; message: string };
  pieces?: number;
}

export type FakeResponsesHandler = (request: FakeResponsesRequest) => FakeResponsesStep;

export interface FakeResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface FakeResponses {
  /** Base URL ending in `/v1`. */
  readonly url: string;
  readonly requests: FakeResponsesRequest[];
  readonly bodies: string[];
  readonly usages: FakeResponsesUsage[];
  /** Requests refused as the real API refuses them (400), with the reason. */
  readonly rejected: string[];
  script(...steps: (FakeResponsesStep | FakeResponsesHandler)[]): void;
  setDefault(handler: FakeResponsesHandler): void;
  close(): Promise<void>;
}
