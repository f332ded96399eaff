/** Types of the fake Amazon Bedrock Runtime API (tests/fakes/bedrock). */

/** A Converse content block, loosely typed: tests read what they need. */
export interface FakeBedrockBlock {
  text?: string;
  image?: { format: string; source: { bytes: string } };
  toolUse?: { toolUseId: string; name: string; input: unknown };
  toolResult?: { toolUseId: string; content: { text?: string }[]; status?: string };
  cachePoint?: { type: string };
  reasoningContent?: { reasoningText?: { text: string; signature: string }; redactedContent?: string };
  [key: string]: unknown;
}

/** A Converse body as the fake received it. */
export interface FakeBedrockRequest {
  messages: { role: string; content: FakeBedrockBlock[] }[];
  system?: FakeBedrockBlock[];
  toolConfig?: { tools: { toolSpec?: { name: string }; cachePoint?: { type: string } }[] };
  inferenceConfig?: { maxTokens?: number };
  additionalModelRequestFields?: {
    thinking?: { type: string; budget_tokens: number };
    reasoningConfig?: { type: string; maxReasoningEffort?: string };
  };
  /** The model id, from the URL. */
  modelId: string;
  /** The request's Authorization header (SigV4). */
  authorization: string;
  [key: string]: unknown;
}

export interface FakeBedrockStep {
  text?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /**
   * An HTTP error with AWS's JSON body and `x-amzn-errortype`; `type` defaults by status
   * (429 ThrottlingException, 400 ValidationException, 403 AccessDeniedException, 500 InternalServerException).
   */
  error?: { status: number; type?: string; message?: string; retryAfterSeconds?: number };
  /**
   * An exception frame inside the stream after the text (`:message-type: exception`), e.g.
   * `throttlingException`, `modelStreamErrorException`, `validationException`.
   */
  streamException?: { type: string; message: string };
  /** Reasoning streamed (as `reasoningContent` text, then a signature) before the text. */
  reasoning?: string;
  /** stopReason `guardrail_intervened`, no content. */
  guardrail?: boolean;
  /** Usage's cache tokens. */
  cacheRead?: number;
  cacheWrite?: number;
  pieces?: number;
}

export type FakeBedrockHandler = (request: FakeBedrockRequest) => FakeBedrockStep;

export interface FakeBedrock {
  /** The endpoint (a provider's `base_url`, the SDK's `endpoint`). */
  readonly url: string;
  readonly requests: FakeBedrockRequest[];
  script(...steps: (FakeBedrockStep | FakeBedrockHandler)[]): void;
  setDefault(handler: FakeBedrockHandler): void;
  close(): Promise<void>;
}
