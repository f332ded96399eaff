/**
 * The providers' HTTP calls: JSON in and out over the platform's `fetch`, with a time limit, the
 * caller's signal, and failures turned into a {@link MemoryProviderError} that names the provider, the
 * method and path and the status (never the key).
 */
import { describeError } from "../../../core/errors.js";
import { MemoryProviderError } from "./types.js";

/** One JSON request. */
export interface JsonRequest {
  method: "GET" | "POST";
  /** Base URL plus path, query included. */
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  signal: AbortSignal;
  /** @defaultValue 15 000 */
  timeoutMs?: number | undefined;
}

/** Error bodies are cut to this many characters in messages. */
const DETAIL_CHARS = 200;

/**
 * Sends `request` and resolves with its parsed JSON body (undefined for an empty body).
 * @throws MemoryProviderError on a status outside 2xx, no answer, a timeout or a body that is not JSON
 */
export async function requestJson(provider: string, request: JsonRequest): Promise<unknown> {
  const { pathname } = new URL(request.url);
  const what = `${request.method} ${pathname}`;
  const timeout = AbortSignal.timeout(request.timeoutMs ?? 15_000);
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: {
        accept: "application/json",
        ...(request.body === undefined ? {} : { "content-type": "application/json" }),
        ...request.headers,
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.any([request.signal, timeout]),
    });
  } catch (err) {
    const why = timeout.aborted ? `no answer within ${request.timeoutMs ?? 15_000} ms` : describeError(err);
    throw new MemoryProviderError(provider, `${provider}: ${what} failed: ${why}`, { cause: err });
  }
  const text = await response.text().catch(() => "");
  if (!response.ok) {
    const detail = text.replace(/\s+/g, " ").trim().slice(0, DETAIL_CHARS);
    const hint = response.status === 401 || response.status === 403 ? " (the API key was refused)" : "";
    throw new MemoryProviderError(
      provider,
      `${provider}: ${what} answered ${response.status}${hint}${detail ? `: ${detail}` : ""}`,
      { status: response.status },
    );
  }
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new MemoryProviderError(provider, `${provider}: ${what} answered a body that is not JSON`, {
      status: response.status,
      cause: err,
    });
  }
}

/** `base` without trailing slashes, `path` appended. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}
