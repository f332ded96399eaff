/**
 * A `fetch` on Node's own http/https modules with keep-alive agents, for the clients on the gateway's
 * hottest paths: the model SDKs and the Telegram Bot API (grammY). Node's built-in fetch (undici) builds
 * and validates a WHATWG Request, Headers and body stream for every call, which cost more CPU per turn
 * than the rest of the call. Only what those clients use is supported: string/Uint8Array bodies, headers, AbortSignal, streamed bodies,
 * and of the response: status, headers, text/json/arrayBuffer, and a body read by async iteration.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { Readable } from "node:stream";
import { compareCodePoints } from "./code-points.js";

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

type Https = typeof import("node:https");

/**
 * Builds the fetch; one per model client (it owns the connection pools). `node:https` (and TLS with it,
 * ~3.5 MiB resident) loads at the first https call: a local model or Bot API server is plain http.
 */
export function createNodeFetch(options: { maxSockets?: number; ca?: string | Buffer } = {}): FetchLike {
  const maxSockets = options.maxSockets ?? 64;
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets });
  let tls: { https: Https; agent: HttpsAgent } | undefined;
  const loadTls = async () => {
    const https = await import("node:https");
    tls ??= {
      https,
      agent: new https.Agent({ keepAlive: true, maxSockets, ...(options.ca ? { ca: options.ca } : {}) }),
    };
  };

  const send = (url: URL, init: RequestInit): Promise<Response> => {
    const secure = url.protocol === "https:";
    const headers = headerRecord(init.headers);
    const body = init.body;
    if (body != null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      // Anything else (streams, FormData) goes through the built-in fetch.
      return fetch(url, init);
    }
    return new Promise<Response>((resolve, reject) => {
      const req = (secure ? tls!.https.request : httpRequest)(
        url,
        {
          method: init.method ?? "GET",
          headers,
          agent: secure ? tls!.agent : httpAgent,
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

  return (input, init = {}) => {
    // A Request goes through the built-in fetch. (Naming the globals `Request` or `Headers` would load
    // Node's fetch implementation at the first call, which a client of this one may never need.)
    if (typeof input !== "string" && !(input instanceof URL)) return fetch(input, init);
    const url = typeof input === "string" ? new URL(input) : input;
    if (url.protocol === "https:" && !tls) return loadTls().then(() => send(url, init));
    return send(url, init);
  };
}

/**
 * Request headers as Node's http takes them, names lower-cased and repeats joined with ", " as `Headers`
 * would, from a `Headers`-like object, a list of pairs or a record.
 */
function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  };
  if (!init) return headers;
  if (Array.isArray(init)) for (const [name, value] of init) add(name!, value!);
  else if (typeof (init as Headers).forEach === "function")
    (init as Headers).forEach((value, name) => {
      add(name, value);
    });
  else
    for (const [name, value] of Object.entries(init as Record<string, string | undefined>))
      if (value != null) add(name, value);
  return headers;
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
    this.#headers ??= rawHeaders(this.#res.rawHeaders);
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
function defineRawHeaders() {
  return class RawHeaders extends Headers {
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

    override forEach(
      callback: (value: string, key: string, parent: Headers) => void,
      thisArg?: unknown,
    ): void {
      for (const [key, value] of this.#sorted()) callback.call(thisArg, value, key, this);
    }

    #sorted(): [string, string][] {
      const entries: [string, string][] = [];
      for (const [key, value] of this.#map) {
        if (key === "set-cookie") for (const cookie of this.#cookies) entries.push([key, cookie]);
        else entries.push([key, value]);
      }
      return entries.sort(([a], [b]) => compareCodePoints(a, b));
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
  };
}

let RawHeadersClass: ReturnType<typeof defineRawHeaders> | undefined;

/**
 * Built on first use: naming the global `Headers` loads Node's fetch implementation (undici), ~20 ms
 * of a start whose first poll does not read a header.
 */
function rawHeaders(raw: readonly string[]): Headers {
  RawHeadersClass ??= defineRawHeaders();
  return new RawHeadersClass(raw);
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
