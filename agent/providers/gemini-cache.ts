/**
 * Gemini's explicit context caching for long stable prefixes: when a request's system instruction and
 * tool declarations together reach {@link GEMINI_CACHE_MIN_CHARS}, they are stored once as a
 * `cachedContents` entry (with a TTL) and each request names it (`cachedContent`) instead of sending
 * them; Google bills the cached tokens at its cached rate. Entries are keyed by a hash of the provider,
 * the model and the prefix's JSON, so every turn of a session (and every session with the same prompt
 * and tools) reuses one; an entry is made again when it is about to expire, or when the API says it is
 * gone (404/403 naming the cached content). A prefix the API refuses to cache (too small for the
 * model, a model without caching) is not asked again for a while: implicit caching covers it.
 */
import { createHash } from "node:crypto";
import type { ResolvedModel } from "./types.js";

/** The shortest prefix, in characters of JSON, worth an explicit cache (about 4,096 tokens). */
export const GEMINI_CACHE_MIN_CHARS = 16_384;

/** How long an entry lives. */
const TTL_SECONDS = 3600;
/** An entry this close to its expiry is made again rather than used. */
const MARGIN_MS = 60_000;
/** How long a prefix the API refused to cache is left to implicit caching. */
const REFUSED_MS = 10 * 60_000;

type Entry =
  | { kind: "ready"; name: string; expiresAt: number }
  | { kind: "refused"; until: number }
  | { kind: "pending"; made: Promise<string | undefined> };

/** The cached-content entries of one transport, by prefix key. */
export class GeminiCaches {
  readonly #fetch: typeof globalThis.fetch;
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(fetchFn: typeof globalThis.fetch, now: () => number = Date.now) {
    this.#fetch = fetchFn;
    this.#now = now;
  }

  /** The key of `prefix` (the JSON members of the system instruction and tools) for `target`. */
  key(target: ResolvedModel, prefix: string): string {
    return createHash("sha256")
      .update(`${target.provider.name}\n${target.provider.baseUrl}\n${target.model}\n${prefix}`)
      .digest("hex");
  }

  /**
   * The name of the entry holding `prefix` (`cachedContents/…`), made when there is none; undefined
   * when the API would not cache it (the request then sends the prefix itself). Never throws but
   * for an abort of `signal`.
   */
  async nameFor(
    target: ResolvedModel,
    prefix: string,
    key: string,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const entry = this.#entries.get(key);
    const now = this.#now();
    if (entry?.kind === "ready" && entry.expiresAt - MARGIN_MS > now) return entry.name;
    if (entry?.kind === "refused" && entry.until > now) return undefined;
    if (entry?.kind === "pending") return entry.made;
    const made = this.#create(target, prefix, key, signal);
    this.#entries.set(key, { kind: "pending", made });
    return made;
  }

  /** Drops the entry of `key` (the API said it is gone): the next request makes it again. */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  async #create(
    target: ResolvedModel,
    prefix: string,
    key: string,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const provider = target.provider;
    try {
      const response = await this.#fetch(`${provider.baseUrl.replace(/\/+$/, "")}/v1beta/cachedContents`, {
        method: "POST",
        headers: {
          ...provider.headers,
          "content-type": "application/json",
          "x-goog-api-key": provider.apiKey ?? "",
        },
        body: `{"model":${JSON.stringify(`models/${target.model}`)},"ttl":"${TTL_SECONDS}s",${prefix}}`,
        signal,
      });
      const text = await response.text();
      if (!response.ok) {
        this.#entries.set(key, { kind: "refused", until: this.#now() + REFUSED_MS });
        return undefined;
      }
      const made = JSON.parse(text) as { name?: string; expireTime?: string };
      if (!made.name) throw new Error("cachedContents.create answered without a name");
      const expiresAt = Date.parse(made.expireTime ?? "");
      this.#entries.set(key, {
        kind: "ready",
        name: made.name,
        expiresAt: Number.isNaN(expiresAt) ? this.#now() + TTL_SECONDS * 1000 : expiresAt,
      });
      return made.name;
    } catch (err) {
      if (signal.aborted) {
        this.#entries.delete(key);
        throw err;
      }
      this.#entries.set(key, { kind: "refused", until: this.#now() + REFUSED_MS });
      return undefined;
    }
  }
}

/** Whether a failed generateContent says its `cachedContent` is gone (expired, deleted). */
export function cacheGone(status: number, body: string): boolean {
  return (status === 404 || status === 403) && /cached ?content/i.test(body);
}
