/** Types of the fake Gemini API (tests/fakes/gemini). */

/** A part of a content, loosely typed: tests read what they need. */
export interface FakeGeminiPart {
  text?: string;
  thought?: boolean;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
  thoughtSignature?: string;
  [key: string]: unknown;
}

/** A generateContent body as the fake received it. */
export interface FakeGeminiRequest {
  contents: { role?: string; parts: FakeGeminiPart[] }[];
  systemInstruction?: { role?: string; parts: FakeGeminiPart[] };
  tools?: {
    functionDeclarations?: {
      name: string;
      description?: string;
      parameters?: unknown;
      parametersJsonSchema?: unknown;
    }[];
  }[];
  generationConfig?: {
    thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean };
    maxOutputTokens?: number;
  };
  /** The cached content entry standing for the system instruction and tools (`cachedContents/…`). */
  cachedContent?: string;
  /** The model, from the URL. */
  model: string;
  [key: string]: unknown;
}

export interface FakeGeminiStep {
  text?: string;
  /** A thought summary before the answer (sent when the request asks for thoughts); signs the calls. */
  thought?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** An HTTP error in Google's body; `retryDelaySeconds` adds RetryInfo, `reason` an ErrorInfo. */
  error?: { status: number; message?: string; retryDelaySeconds?: number; reason?: string };
  /** finishReason SAFETY with no content. */
  blocked?: boolean;
  pieces?: number;
}

export type FakeGeminiHandler = (request: FakeGeminiRequest) => FakeGeminiStep;

export interface FakeGeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount: number;
}

/** A cachedContents entry the fake holds. */
export interface FakeGeminiCache {
  name: string;
  /** `models/<model>`. */
  model: string;
  tokens: number;
  /** Epoch ms; 0 after `expireCaches()`. */
  expiresAt: number;
  /** The create request's body. */
  body: string;
}

export interface FakeGemini {
  /** The base URL (the SDK's `httpOptions.baseUrl`, a provider's `base_url`). */
  readonly url: string;
  readonly requests: FakeGeminiRequest[];
  readonly bodies: string[];
  readonly usages: FakeGeminiUsage[];
  readonly rejected: string[];
  /** The cachedContents entries made so far (expired ones included). */
  caches(): FakeGeminiCache[];
  /** Expires every entry now (a request naming one then gets 404). */
  expireCaches(): void;
  script(...steps: (FakeGeminiStep | FakeGeminiHandler)[]): void;
  setDefault(handler: FakeGeminiHandler): void;
  close(): Promise<void>;
}
