/** One HTTP GET to a checked address, and the capped, decompressing body reader. */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { pipeline, type Readable, type Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { WebError } from "./errors.js";
import { pinnedLookup } from "./resolve.js";
import type { ResolvedAddress } from "./types.js";

/**
 * Sends GET `url` on a fresh connection to `target` (its own agent, no keep-alive: a pooled socket could
 * have been opened by code that did not check the address). TLS still verifies the certificate for the
 * URL's host name. Resolves with the response once headers arrive; rejects on network errors or when
 * `signal` fires (the socket is destroyed either way).
 */
export function requestHop(
  url: URL,
  target: ResolvedAddress,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const secure = url.protocol === "https:";
  const agentOptions = { keepAlive: false, lookup: pinnedLookup(target) };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: "GET", headers, agent, signal }, (res) => {
      res.once("close", () => agent.destroy());
      resolve(res);
    });
    req.once("error", (err) => {
      agent.destroy();
      reject(err);
    });
    req.end();
  });
}

/**
 * The response body decompressed per Content-Encoding (gzip, deflate, br; identity otherwise). Through
 * `pipeline`, so a reset socket or corrupt data errors the stream we iterate instead of stalling it.
 */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  let inflate: Transform | undefined;
  if (encoding === "gzip" || encoding === "x-gzip") inflate = createGunzip();
  else if (encoding === "br") inflate = createBrotliDecompress();
  else if (encoding === "deflate") inflate = createInflate();
  // The error also reaches the iterator of `inflate`, which is where it is handled.
  return inflate ? pipeline(res, inflate, () => {}) : res;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`
    : `${Math.ceil(bytes / 1024)} KB`;
}

/**
 * Reads the whole body, decompressed, up to `maxBytes`. Past the cap (or when Content-Length already
 * says so) it destroys the response, which closes the socket, and rejects with `too_large`. Other
 * failures (reset connection, corrupt gzip, abort) reject with the underlying error.
 */
export async function readCapped(res: IncomingMessage, url: string, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = (seen: string) =>
    new WebError(
      "too_large",
      url,
      `the page at ${url} is larger than the ${formatBytes(maxBytes)} cap (${seen}); ` +
        "reading stopped. Try a more specific URL or raise maxBytes",
    );
  const declared = Number(res.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw tooLarge(`it declares ${formatBytes(declared)}`);
  }
  const source = decoded(res);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of source) {
      const buffer = chunk as Buffer;
      total += buffer.length;
      if (total > maxBytes) throw tooLarge(`more than ${formatBytes(maxBytes)} arrived`);
      chunks.push(buffer);
    }
  } catch (err) {
    res.destroy();
    if (source !== res) source.destroy();
    throw err;
  }
  return Buffer.concat(chunks, total);
}
