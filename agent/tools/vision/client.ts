/**
 * The auxiliary vision model: one OpenAI-compatible `POST {baseUrl}/chat/completions` with the question
 * and the image as an `image_url` content part (a `data:` URL, so the provider never fetches anything).
 */
import { HeraldError } from "../../../core/errors.js";

/** The `vision` config section, validated. */
export interface VisionEndpoint {
  /** OpenAI-compatible base URL up to the version, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string | undefined;
  /** A vision-capable model, e.g. `gpt-4o-mini`, `qwen2.5-vl`. */
  model: string;
  /** One request may take this long. @defaultValue 60_000 */
  timeoutMs?: number | undefined;
}

/**
 * Asks the vision model `question` about the image (`bytes` of type `mime`) and resolves with its
 * answer. Rejects with a HeraldError: `unauthorized` naming `vision.api_key` on 401/403, `model_error`
 * with the provider's message on other statuses, `model_unavailable` when it does not answer in time.
 */
export async function askVision(
  endpoint: VisionEndpoint,
  image: { bytes: Uint8Array; mime: string },
  question: string,
  signal?: AbortSignal,
): Promise<string> {
  const timeoutMs = endpoint.timeoutMs ?? 60_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const url = `${endpoint.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const dataUrl = `data:${image.mime};base64,${Buffer.from(image.bytes).toString("base64")}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: endpoint.model,
        stream: false,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: question },
              { type: "image_url", image_url: { url: dataUrl } },
            ],
          },
        ],
      }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted)
      throw new HeraldError(
        `the vision model at ${endpoint.baseUrl} did not answer within ${timeoutMs / 1000} s`,
        {
          code: "model_unavailable",
          retryable: true,
          cause: err,
        },
      );
    throw new HeraldError(
      `the vision model at ${endpoint.baseUrl} is unreachable: ${(err as Error).message}`,
      {
        code: "model_error",
        cause: err,
      },
    );
  }
  const body = (await res.json().catch(() => undefined)) as
    | { choices?: { message?: { content?: string | null } }[]; error?: { message?: string } }
    | undefined;
  if (res.status === 401 || res.status === 403)
    throw new HeraldError(
      `the vision model refused vision.api_key (HTTP ${res.status}): set a valid key (HERALD_VISION_KEY)`,
      { code: "unauthorized" },
    );
  if (!res.ok)
    throw new HeraldError(
      `the vision model answered HTTP ${res.status}: ${body?.error?.message ?? "no message"}`,
      { code: "model_error" },
    );
  const answer = body?.choices?.[0]?.message?.content?.trim();
  if (!answer) throw new HeraldError("the vision model gave an empty answer", { code: "model_error" });
  return answer;
}
