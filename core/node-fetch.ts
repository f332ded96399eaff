/**
 * A `fetch` on Node's own http/https modules with keep-alive agents, for the clients on the gateway's
 * hottest paths: the model SDKs and the Telegram Bot API (grammY). Node's built-in fetch (undici) builds
 * and validates a WHATWG Request, Headers and body stream for every call, which cost more CPU per turn
 * than the rest of the call. Only what those clients use is supported: string/Uint8Array bodies, headers, AbortSignal, streamed bodies,
 * and of the response: status, headers, text/json/arrayBuffer, and a body read by async iteration.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Builds the fetch; one per model client (it owns the connection pools). */
export function createNodeFetch(options: { maxSockets?: number; ca?: string | Buffer } = {}): FetchLike {
  const maxSockets = options.maxSockets ?? 64;
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets });
  const httpsAgent = new HttpsAgent({
    keepAlive: true,
    maxSockets,
    ...(options.ca ? { ca: options.ca } : {}),
  });

  return (input, init = {}) => {
    if (input instanceof Request) return fetch(input, init);
    const url = typeof input === "string" ? new URL(input) : input;
    const secure = url.protocol === "https:";
    const headers: Record<string, string> = {};
    if (init.headers instanceof Headers) {
      for (const [key, value] of init.headers) headers[key] = value;
    } else if (init.headers) {
      new Headers(init.headers).forEach((value, key) => {
        headers[key] = value;
      });
    }
    const body = init.body;
    if (body != null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      // Anything else (streams, FormData) goes through the built-in fetch.
      return fetch(url, init);
    }
    return new Promise<Response>((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: init.method ?? "GET",
          headers,
          agent: secure ? httpsAgent : httpAgent,
          signal: init.signal ?? undefined,
        },
        (res) => {
          const signal = init.signal;
          if (signal) {
            // The body errors with an AbortError when the caller aborts mid-stream, as with fetch.
            const onAbort = () => res.destroy(abortError(signal));
            signal.addEventListener("abort", onAbort, { once: true });
            res.once("close", () => signal.removeEventListener("abort", onAbort));
          }
          // Not a WHATWG Response (see NodeResponse), but what the SDK uses of one.
          resolve(new NodeResponse(res, url.href, init.method ?? "GET") as unknown as Response);
        },
      );
      req.on("error", (err) => reject(init.signal?.aborted ? abortError(init.signal) : err));
      if (typeof body === "string") {
        // The length up front: one write, no chunked encoding (and no Buffer copy of the body kept).
        req.setHeader("content-length", Buffer.byteLength(body));
        req.end(body);
      } else req.end(body ?? undefined);
    });
  };
}

/**
 * The answer as the SDK reads it. A WHATWG Response would wrap the socket in a web ReadableStream, whose
 * per-chunk promises cost more CPU than the rest of a streamed call; the SDK iterates any body that is
 * async-iterable, so the body is the Node stream itself, with `getReader()` for web-stream readers.
 * Headers are built on first use.
 */
class NodeResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly redirected = false;
  readonly type = "basic";
  readonly body: NodeBody | null;
  #headers: Headers | undefined;
  readonly #res: IncomingMessage;

  constructor(res: IncomingMessage, url: string, method: string) {
    this.#res = res;
    this.url = url;
    this.status = res.statusCode ?? 500;
    this.statusText = res.statusMessage ?? "";
    this.ok = this.status >= 200 && this.status < 300;
    const empty = method === "HEAD" || this.status === 204 || this.status === 304;
    if (empty) res.resume();
    this.body = empty ? null : new NodeBody(res);
  }

  get headers(): Headers {
    this.#headers ??= new RawHeaders(this.#res.rawHeaders);
    return this.#headers;
  }

  get bodyUsed(): boolean {
    return this.body?.used ?? false;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return (await this.#bytes()).toString("utf8");
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async #bytes(): Promise<Buffer> {
    if (!this.body) return Buffer.alloc(0);
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
}

/**
 * A response's headers as `Headers` reads them (names lower-cased, repeats joined with ", ", iterated
 * sorted by name) from Node's raw list, without the per-header validation and copies of `append`:
 * the SDK reads them on every call (it logs the request id, and describes them for its debug log
 * whether or not that logs). Writes work too; `set-cookie` keeps its values apart as in `Headers`.
 */
class RawHeaders extends Headers {
  readonly #map = new Map<string, string>();
  readonly #cookies: string[] = [];

  constructor(raw: readonly string[]) {
    super();
    for (let i = 0; i < raw.length; i += 2) this.append(raw[i]!, raw[i + 1]!);
  }

  override append(name: string, value: string): void {
    const key = name.toLowerCase();
    if (key === "set-cookie") this.#cookies.push(value);
    const previous = this.#map.get(key);
    this.#map.set(key, previous === undefined ? value : `${previous}, ${value}`);
  }

  override set(name: string, value: string): void {
    const key = name.toLowerCase();
    if (key === "set-cookie") this.#cookies.splice(0, this.#cookies.length, value);
    this.#map.set(key, value);
  }

  override delete(name: string): void {
    const key = name.toLowerCase();
    if (key === "set-cookie") this.#cookies.length = 0;
    this.#map.delete(key);
  }

  override get(name: string): string | null {
    return this.#map.get(name.toLowerCase()) ?? null;
  }

  override has(name: string): boolean {
    return this.#map.has(name.toLowerCase());
  }

  override getSetCookie(): string[] {
    return [...this.#cookies];
  }

  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [key, value] of this.#sorted()) callback.call(thisArg, value, key, this);
  }

  #sorted(): [string, string][] {
    const entries: [string, string][] = [];
    for (const [key, value] of this.#map) {
      if (key === "set-cookie") for (const cookie of this.#cookies) entries.push([key, cookie]);
      else entries.push([key, value]);
    }
    return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  // The iterators' return type differs between lib versions: they are what `Headers` returns.
  override entries(): ReturnType<Headers["entries"]> {
    return this.#sorted()[Symbol.iterator]() as unknown as ReturnType<Headers["entries"]>;
  }

  override keys(): ReturnType<Headers["keys"]> {
    return this.#sorted()
      .map(([key]) => key)
      [Symbol.iterator]() as unknown as ReturnType<Headers["keys"]>;
  }

  override values(): ReturnType<Headers["values"]> {
    return this.#sorted()
      .map(([, value]) => value)
      [Symbol.iterator]() as unknown as ReturnType<Headers["values"]>;
  }

  override [Symbol.iterator](): ReturnType<Headers["entries"]> {
    return this.entries();
  }
}

/** A response body: the socket's stream, read once, by async iteration or a web-stream reader. */
class NodeBody {
  used = false;
  readonly #res: IncomingMessage;

  constructor(res: IncomingMessage) {
    this.#res = res;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    this.used = true;
    return this.#res[Symbol.asyncIterator]();
  }

  getReader(): ReadableStreamDefaultReader<Uint8Array> {
    this.used = true;
    return (Readable.toWeb(this.#res) as ReadableStream<Uint8Array>).getReader();
  }

  async cancel(): Promise<void> {
    this.#res.destroy();
  }
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const err = new Error("The operation was aborted", { cause: reason });
  err.name = "AbortError";
  return err;
}
