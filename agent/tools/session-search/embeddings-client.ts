/**
 * The embeddings endpoint: OpenAI-compatible `POST {baseUrl}/embeddings` through the openai SDK (its
 * own retries off: the background embedder retries with its own backoff and never blocks a turn).
 * Vectors come back as floats at unit length, so a dot product is their cosine similarity.
 */
import type OpenAI from "openai";
import { HeraldError } from "../../../core/errors.js";
import { createNodeFetch } from "../../../core/node-fetch.js";
import { loadedOpenAI, loadOpenAI } from "../../openai-sdk.js";

/** Where and how to embed. */
export interface EmbeddingsEndpoint {
  /** OpenAI-compatible base URL up to the version, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** The vectors' length; a response of another length is an error. */
  dimensions: number;
  /** Send `dimensions` with each request. @defaultValue false */
  requestDimensions?: boolean | undefined;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string | undefined;
  /** @defaultValue 30_000 */
  timeoutMs?: number | undefined;
}

/** Embeds texts; one request per call. */
export interface EmbeddingsClient {
  /**
   * The unit-length vectors of `texts`, in order. Rejects with a HeraldError: `unauthorized` on
   * 401/403 (not retryable), `model_rate_limited` on 429 and `model_unavailable` on 5xx, a timeout or
   * an unreachable endpoint (retryable), `model_error` on other statuses or a malformed answer.
   */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Builds the client over the openai SDK. */
export function createEmbeddingsClient(endpoint: EmbeddingsEndpoint): EmbeddingsClient {
  // The SDK loads with the first embedding asked for, not at start (agent/openai-sdk.ts).
  let client: OpenAI | undefined;
  const sdkOf = async () => {
    const { default: OpenAI } = await loadOpenAI();
    client ??= new OpenAI({
      baseURL: endpoint.baseUrl,
      apiKey: endpoint.apiKey ?? "none",
      maxRetries: 0,
      timeout: endpoint.timeoutMs ?? 30_000,
      // The gateway's own keep-alive fetch: the embedder shares the process with the turns.
      fetch: createNodeFetch({ maxSockets: 4 }),
    });
    return client;
  };
  const where = `the embeddings endpoint ${endpoint.baseUrl} (model ${endpoint.model})`;
  return {
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      let response: OpenAI.CreateEmbeddingResponse;
      try {
        const sdk = await sdkOf();
        response = await sdk.embeddings.create(
          {
            model: endpoint.model,
            input: [...texts],
            encoding_format: "float",
            ...(endpoint.requestDimensions ? { dimensions: endpoint.dimensions } : {}),
          },
          { signal },
        );
      } catch (err) {
        throw toHeraldError(err, where);
      }
      const vectors = new Array<Float32Array | undefined>(texts.length);
      for (const item of response.data ?? []) {
        if (!Array.isArray(item.embedding) || item.index < 0 || item.index >= texts.length) continue;
        if (item.embedding.length !== endpoint.dimensions)
          throw new HeraldError(
            `${where} returned vectors of ${item.embedding.length} dimensions, not ${endpoint.dimensions}. Fix: set embeddings.dimensions to ${item.embedding.length}${endpoint.requestDimensions ? "" : ", or request_dimensions: true if the model can shorten its vectors"}.`,
            { code: "config_invalid" },
          );
        vectors[item.index] = normalise(item.embedding);
      }
      if (vectors.some((v) => v === undefined))
        throw new HeraldError(`${where} answered without a vector for every input`, { code: "model_error" });
      return vectors as Float32Array[];
    },
  };
}

function normalise(values: readonly number[]): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let k = 0; k < vector.length; k++) vector[k] = (vector[k] ?? 0) / norm;
  return vector;
}

function toHeraldError(err: unknown, where: string): HeraldError {
  // Not loaded: nothing thrown is the SDK's.
  const OpenAI = loadedOpenAI()?.default;
  if (OpenAI && err instanceof OpenAI.APIUserAbortError)
    return new HeraldError(`${where}: cancelled`, { code: "turn_cancelled", cause: err });
  if (OpenAI && err instanceof OpenAI.APIConnectionError)
    return new HeraldError(`${where} is unreachable or timed out: ${err.message}`, {
      code: "model_unavailable",
      retryable: true,
      cause: err,
    });
  if (OpenAI && err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    if (status === 401 || status === 403)
      return new HeraldError(
        `${where} refused the key (${status}). Fix: check the variable embeddings.api_key_env names.`,
        { code: "unauthorized", cause: err },
      );
    if (status === 429)
      return new HeraldError(`${where} is rate limiting (429)`, {
        code: "model_rate_limited",
        retryable: true,
        cause: err,
      });
    if (status >= 500 || status === 408)
      return new HeraldError(`${where} failed (${status}): ${err.message}`, {
        code: "model_unavailable",
        retryable: true,
        cause: err,
      });
    return new HeraldError(`${where} refused the request (${status}): ${err.message}`, {
      code: "model_error",
      cause: err,
    });
  }
  return new HeraldError(`${where} failed: ${err instanceof Error ? err.message : String(err)}`, {
    code: "model_error",
    cause: err,
  });
}
