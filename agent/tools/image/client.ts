/**
 * The images endpoint: one OpenAI-compatible `POST {baseUrl}/images/generations` through the `openai`
 * SDK (its retries with backoff on 429, 5xx and dropped connections). Providers answer `b64_json`
 * (gpt-image-1) or `url`s (dall-e, many gateways); a URL is fetched through the guarded fetch.
 */
import { HeraldError } from "../../../core/errors.js";
import { imageTypeOf, safeFetch } from "../web/safe-fetch.js";
import type { AllowPrivate } from "../web/types.js";

/** The `images` config section, validated. */
export interface ImagesEndpoint {
  /** OpenAI-compatible base URL up to the version, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string | undefined;
  /** e.g. `gpt-image-1`, `dall-e-3`. */
  model: string;
  /** The size asked when the call names none. @defaultValue the provider's */
  size?: string | undefined;
  /** One request may take this long. @defaultValue 120_000 */
  timeoutMs?: number | undefined;
}

/** One image the endpoint made. */
export interface GeneratedImage {
  bytes: Uint8Array;
  mime: string;
  /** The prompt as the provider rewrote it, when it says. */
  revisedPrompt?: string | undefined;
}

/** What a generation made, and the tokens the provider counted (gpt-image-1 reports them). */
export interface Generation {
  images: GeneratedImage[];
  usage?: { inputTokens: number; outputTokens: number } | undefined;
}

/** Options of one {@link generateImages} call. */
export interface GenerateOptions {
  prompt: string;
  n: number;
  size?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Let image URLs the provider answers reach private addresses. @defaultValue false */
  allowPrivate?: AllowPrivate | undefined;
  /** Largest image accepted. @defaultValue 25 MiB */
  maxImageBytes?: number | undefined;
  /** Retries of a failed request (the SDK's backoff). @defaultValue 2 */
  maxRetries?: number | undefined;
}

const IMAGE_TYPES = {
  accepts: (mime: string) => mime.startsWith("image/"),
  accept: "image/png,image/jpeg,image/webp;q=0.9,image/*;q=0.8",
  what: "image_generate downloads images",
};

/**
 * Asks the endpoint for `n` images of `prompt`. Rejects with a HeraldError: `unauthorized` naming
 * `images.api_key` on 401/403, `invalid_input` with the provider's message on 400 (a refused prompt, a
 * size the model lacks), `model_unavailable` (retryable) when it does not answer in time or stays
 * overloaded, `model_error` otherwise; with `signal.reason` when aborted.
 */
export async function generateImages(
  endpoint: ImagesEndpoint,
  options: GenerateOptions,
): Promise<Generation> {
  const { default: OpenAI, APIError, APIConnectionTimeoutError } = await import("openai");
  const client = new OpenAI({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey ?? "none",
    timeout: endpoint.timeoutMs ?? 120_000,
    maxRetries: options.maxRetries ?? 2,
  });
  const size = options.size ?? endpoint.size;
  let response: Awaited<ReturnType<typeof client.images.generate>>;
  try {
    response = await client.images.generate(
      {
        model: endpoint.model,
        prompt: options.prompt,
        n: options.n,
        // Sizes differ per model; the provider says which it lacks.
        ...(size ? { size: size as "1024x1024" } : {}),
      },
      { signal: options.signal },
    );
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw describeFailure(err, endpoint, { APIError, APIConnectionTimeoutError });
  }
  const images: GeneratedImage[] = [];
  for (const item of response.data ?? []) {
    const image = item.b64_json
      ? fromBase64(item.b64_json)
      : item.url
        ? await fromUrl(item.url, options)
        : undefined;
    if (image) images.push({ ...image, revisedPrompt: item.revised_prompt ?? undefined });
  }
  if (images.length === 0)
    throw new HeraldError("the images endpoint answered no image", { code: "model_error" });
  const u = response.usage;
  return { images, usage: u ? { inputTokens: u.input_tokens, outputTokens: u.output_tokens } : undefined };
}

function fromBase64(b64: string): { bytes: Uint8Array; mime: string } {
  const bytes = Buffer.from(b64, "base64");
  const mime = imageTypeOf(bytes);
  if (!mime)
    throw new HeraldError("the images endpoint answered bytes that are not an image", {
      code: "model_error",
    });
  return { bytes, mime };
}

async function fromUrl(url: string, options: GenerateOptions): Promise<{ bytes: Uint8Array; mime: string }> {
  const res = await safeFetch(url, {
    signal: options.signal,
    maxBytes: options.maxImageBytes ?? 25 * 1024 * 1024,
    allowPrivate: options.allowPrivate,
    types: IMAGE_TYPES,
  });
  if (res.status >= 400)
    throw new HeraldError(`the generated image at ${url} answered HTTP ${res.status}`, {
      code: "model_error",
    });
  return { bytes: res.bytes, mime: imageTypeOf(res.bytes) ?? res.contentType };
}

function describeFailure(
  err: unknown,
  endpoint: ImagesEndpoint,
  sdk: { APIError: new (...a: never[]) => Error; APIConnectionTimeoutError: new (...a: never[]) => Error },
): HeraldError {
  if (err instanceof sdk.APIConnectionTimeoutError)
    return new HeraldError(
      `the images endpoint at ${endpoint.baseUrl} did not answer within ${(endpoint.timeoutMs ?? 120_000) / 1000} s`,
      { code: "model_timeout", retryable: true, cause: err },
    );
  if (err instanceof sdk.APIError) {
    const status = (err as Error & { status?: number }).status;
    const message = (err as Error & { error?: { message?: string } }).error?.message ?? err.message;
    if (status === 401 || status === 403)
      return new HeraldError(
        `the images endpoint refused images.api_key (HTTP ${status}): set a valid key (HERALD_IMAGES_KEY)`,
        { code: "unauthorized", cause: err },
      );
    if (status === 400)
      return new HeraldError(`the images endpoint refused the request: ${message}`, {
        code: "invalid_input",
        cause: err,
      });
    if (status === undefined)
      return new HeraldError(`the images endpoint at ${endpoint.baseUrl} is unreachable: ${message}`, {
        code: "model_unavailable",
        retryable: true,
        cause: err,
      });
    return new HeraldError(`the images endpoint answered HTTP ${status}: ${message}`, {
      code: status === 429 ? "model_rate_limited" : status >= 500 ? "model_unavailable" : "model_error",
      retryable: status === 429 || status >= 500,
      cause: err,
    });
  }
  return new HeraldError(`the images endpoint failed: ${(err as Error).message}`, {
    code: "model_error",
    cause: err,
  });
}
