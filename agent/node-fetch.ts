/**
 * A `fetch` for the openai SDK on Node's own http/https modules with keep-alive agents. The model call
 * is the gateway's hottest path; Node's built-in fetch (undici) builds and validates a WHATWG Request,
 * Headers and body stream for every call, which cost more CPU per turn than the rest of the call.
 * Only what the SDK uses is supported: string/Uint8Array bodies, headers, AbortSignal, streamed bodies.
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
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
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
          resolve(toResponse(res, init.method ?? "GET"));
        },
      );
      req.on("error", (err) => reject(init.signal?.aborted ? abortError(init.signal) : err));
      req.end(body ?? undefined);
    });
  };
}

function toResponse(res: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2)
    headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const status = res.statusCode ?? 500;
  const empty = method === "HEAD" || status === 204 || status === 304;
  if (empty) res.resume();
  const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: res.statusMessage ?? "", headers });
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const err = new Error("The operation was aborted", { cause: reason });
  err.name = "AbortError";
  return err;
}
