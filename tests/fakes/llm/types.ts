/**
 * Types of the scripted fake OpenAI-compatible model server used by tests and the benchmark.
 */

/** A chat.completions request body as the fake received it (loosely typed: tests read what they need). */
export interface FakeLlmRequest {
  model: string;
  messages: FakeLlmMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** One message of a request. `content` is a string, null, or an array of content parts (vision). */
export interface FakeLlmMessage {
  role: string;
  content?: string | null | { type: string; text?: string; image_url?: { url: string } }[];
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** Timing and matching options every step may carry. */
export interface FakeLlmStepOptions {
  /** Only answers requests for this model; other requests skip past it in the queue. */
  model?: string;
  /** Wait before answering (ends early when the client disconnects). @defaultValue 0 */
  delayMs?: number;
  /**
   * Wait between stream chunks after the first content piece (ends early when the client disconnects).
   * @defaultValue 0
   */
  chunkDelayMs?: number;
  /** How many stream chunks the text is split into (a slow answer written piece by piece). @defaultValue 3 */
  pieces?: number;
}

/** A tool call the fake model asks for. `arguments` as an object is JSON-encoded. */
export interface FakeLlmToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  /** @defaultValue a generated `call_<n>` */
  id?: string;
}

/** One scripted answer. */
export type FakeLlmStep = FakeLlmStepOptions &
  (
    | { text: string; toolCalls?: undefined; error?: undefined; disconnect?: undefined; sse?: undefined }
    | {
        toolCalls: FakeLlmToolCall[];
        text?: string;
        error?: undefined;
        disconnect?: undefined;
        sse?: undefined;
      }
    | {
        error: { status: number; message?: string; retryAfterSeconds?: number };
        text?: undefined;
        toolCalls?: undefined;
        disconnect?: undefined;
        sse?: undefined;
      }
    /** Drops the connection without an answer (a connection error for the client). */
    | { disconnect: true; text?: undefined; toolCalls?: undefined; error?: undefined; sse?: undefined }
    /**
     * A 200 event stream written exactly as given, one write per piece (`chunkDelayMs` apart, default
     * 5 ms, so each arrives as its own read): for how a client copes with bytes split anywhere.
     */
    | {
        sse: (string | Uint8Array)[];
        text?: undefined;
        toolCalls?: undefined;
        error?: undefined;
        disconnect?: undefined;
      }
  );

/** Builds a step from the request (scripted function steps and the default handler). */
export type FakeLlmHandler = (request: FakeLlmRequest) => FakeLlmStep;

export interface FakeLlmOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get 401. */
  apiKey?: string;
  /** Models `GET /v1/models` lists. @defaultValue ["fake-model"] */
  models?: string[];
  /**
   * Keep every request body in `requests`. The benchmark turns it off: hundreds of thousands of kept
   * bodies would make the load generator's own GC part of what is measured. @defaultValue true
   */
  keepRequests?: boolean;
}

/** A running fake. */
export interface FakeLlm {
  /** Base URL ending in `/v1` (pass as the SDK's `baseURL`). */
  readonly url: string;
  /** Every chat.completions request body received (past the key check), in arrival order (none kept
   * with `keepRequests: false`). */
  readonly requests: FakeLlmRequest[];
  /** The raw body of each of `requests`, byte for byte as received. */
  readonly bodies: string[];
  /** The HTTP headers of each of `requests` (lower-case names). */
  readonly headers: Record<string, string | string[] | undefined>[];
  /**
   * The usage reported for each answered request, in order. `prompt_tokens_details.cached_tokens`
   * simulates a provider's prompt cache: the prefix shared with the previous request, in 64-token blocks.
   */
  readonly usages: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
  }[];
  /** How many chat.completions requests arrived (past the key check). */
  received(): number;
  /** Requests whose client disconnected before the answer ended, in order. */
  readonly closedEarly: FakeLlmRequest[];
  /** Queues answers; each request takes the first queued step that matches its model. */
  script(...steps: (FakeLlmStep | FakeLlmHandler)[]): void;
  /** The handler used when no queued step matches. @defaultValue echo of the last user message */
  setDefault(handler: FakeLlmHandler): void;
  /** Steps still queued. */
  pending(): number;
  /** Resolves once `count` requests have arrived (already true: at once). */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once `count` requests have been closed early by their client. */
  waitForClosedEarly(count: number): Promise<void>;
  close(): Promise<void>;
}
