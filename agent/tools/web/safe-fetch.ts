/**
 * `safeFetch`: the HTTP GET agent tools use to read a URL someone else chose. It resolves each host
 * itself, refuses non-public addresses, connects to exactly the address it checked, follows redirects by
 * hand (checking every hop), and caps time, size and content type.
 */
import { describeError } from "../../../core/errors.js";
import { WebError } from "./errors.js";
import { readCapped, requestHop } from "./http-hop.js";
import { resolveChecked, systemLookup } from "./resolve.js";
import type { FetchTypes, SafeFetchOptions, SafeFetchResult } from "./types.js";

/** The User-Agent sent by default: a current desktop Chrome, since many sites refuse unknown agents. */
export const DEFAULT_USER_AGENT =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TLS_FAILURE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/;

/** True for the MIME types `safeFetch` reads: text/*, HTML, XHTML, JSON, XML (and +json/+xml), PDF. */
export function isReadableType(mime: string): boolean {
  return (
    mime.startsWith("text/") ||
    mime === "application/xhtml+xml" ||
    mime === "application/json" ||
    mime === "application/xml" ||
    mime.endsWith("+json") ||
    mime.endsWith("+xml") ||
    mime === "application/pdf"
  );
}

function mimeOf(header: string | undefined): { mime: string; charset: string | undefined } {
  const [mime = "", ...params] = (header ?? "").split(";");
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)/i.exec(p)?.[1]).find(Boolean);
  return { mime: mime.trim().toLowerCase(), charset };
}

const PAGE_TYPES: FetchTypes = {
  accepts: isReadableType,
  accept:
    "text/html,application/xhtml+xml,application/xml;q=0.9,application/pdf;q=0.8,text/*;q=0.7,*/*;q=0.1",
  what: "web_extract reads text, HTML and PDF pages",
};

/** A type for a body served without Content-Type: PDF by its magic, text when it has no NUL byte. */
function sniff(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.subarray(0, 1024));
  if (head.subarray(0, 5).toString("latin1") === "%PDF-") return "application/pdf";
  const image = imageTypeOf(head);
  if (image) return image;
  if (head.includes(0)) return "application/octet-stream";
  return /^\s*<(!doctype html|html|head|body)/i.test(head.toString("latin1")) ? "text/html" : "text/plain";
}

/** The image type of bytes by their magic (PNG, JPEG, GIF, WebP), or undefined. */
export function imageTypeOf(head: Uint8Array): string | undefined {
  const b = Buffer.from(head.subarray(0, 12));
  if (b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.toString("latin1", 0, 4) === "GIF8") return "image/gif";
  if (b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  return undefined;
}

/** Decodes with the declared charset, else an HTML `<meta charset>` in the first KB, else UTF-8. */
function decodeText(bytes: Uint8Array, mime: string, declared: string | undefined): string {
  let charset = declared;
  if (!charset && mime.includes("html")) {
    const head = Buffer.from(bytes.subarray(0, 1024)).toString("latin1");
    charset = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

function parseUrl(text: string, base?: URL): URL {
  try {
    return new URL(text, base);
  } catch (err) {
    throw new WebError("invalid_url", text, `"${text}" is not a valid URL`, { cause: err });
  }
}

/** Rejects when `signal` fires, for steps (DNS) that cannot be cancelled themselves. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * GETs `url` for an agent tool. Each hop is resolved with `options.lookup`, every address checked (see
 * agent/tools/web/address.ts) unless `allowPrivate` allows it, and the connection pinned to the checked address.
 * Resolves with the final response whatever its status; rejects with a `WebError` whose `reason` says
 * why: `invalid_url`, `unsupported_scheme`, `blocked_address`, `unsupported_type`, `too_large`,
 * `too_many_redirects`, `timeout` (retryable), `network` (retryable unless TLS), `dns`, `aborted`.
 */
export async function safeFetch(url: string, options: SafeFetchOptions = {}): Promise<SafeFetchResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const state = { url };
  try {
    return await fetchHops(state, options, signal);
  } catch (err) {
    if (options.signal?.aborted)
      throw new WebError("aborted", state.url, `the fetch of ${state.url} was cancelled`, { cause: err });
    if (timeout.aborted)
      throw new WebError(
        "timeout",
        state.url,
        `${state.url} did not answer in full within ${timeoutMs / 1000} s (timeoutMs); the site is slow or ` +
          "unreachable, try again later",
        { cause: err, retryable: true },
      );
    if (err instanceof WebError) throw err;
    const code = String((err as NodeJS.ErrnoException).code ?? "");
    if (TLS_FAILURE.test(code))
      throw new WebError("network", state.url, `the TLS certificate of ${state.url} is not valid (${code})`, {
        cause: err,
      });
    throw new WebError("network", state.url, `could not read ${state.url}: ${describeError(err)}`, {
      cause: err,
      retryable: true,
    });
  }
}

async function fetchHops(
  state: { url: string },
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<SafeFetchResult> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const headers = {
    "user-agent": options.userAgent ?? DEFAULT_USER_AGENT,
    accept: (options.types ?? PAGE_TYPES).accept,
    "accept-language": "en-US,en;q=0.9",
    "accept-encoding": "gzip, deflate, br",
  };
  const redirects: string[] = [];
  let current = parseUrl(state.url);
  for (;;) {
    state.url = current.href;
    if (current.protocol !== "http:" && current.protocol !== "https:")
      throw new WebError(
        "unsupported_scheme",
        current.href,
        `refused ${current.href}: only http and https URLs can be fetched, not ${current.protocol.slice(0, -1)}`,
      );
    const lookup = options.lookup ?? systemLookup;
    const target = await untilAborted(
      resolveChecked(
        current,
        options.allowPrivate ?? false,
        (host) => lookup(host, signal),
        signal,
        options.ownListeners,
      ),
      signal,
    ).catch((err: unknown) => {
      // A refused hop says where the chain started: the URL asked for may look harmless.
      if (!(err instanceof WebError) || err.reason !== "blocked_address" || !redirects[0]) throw err;
      throw new WebError("blocked_address", err.url, `${err.message} (at a redirect from ${redirects[0]})`, {
        cause: err,
      });
    });
    const res = await requestHop(current, target, headers, signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECT_STATUSES.has(status) && location) {
      res.destroy();
      if (redirects.length >= maxRedirects)
        throw new WebError(
          "too_many_redirects",
          current.href,
          `${redirects[0] ?? current.href} redirected more than ${maxRedirects} times (maxRedirects); stopped at ${current.href}`,
        );
      redirects.push(current.href);
      current = parseUrl(location, current);
      continue;
    }
    const types = options.types ?? PAGE_TYPES;
    const declared = mimeOf(res.headers["content-type"]);
    if (declared.mime && !types.accepts(declared.mime)) {
      res.destroy();
      throw new WebError("unsupported_type", current.href, `${types.what}; this URL is ${declared.mime}`, {
        status,
      });
    }
    const bytes = await readCapped(res, current.href, options.maxBytes ?? DEFAULT_MAX_BYTES);
    const mime = declared.mime || sniff(bytes);
    if (!types.accepts(mime))
      throw new WebError("unsupported_type", current.href, `${types.what}; this URL is ${mime}`);
    const text =
      isReadableType(mime) && mime !== "application/pdf"
        ? decodeText(bytes, mime, declared.charset)
        : undefined;
    return { url: current.href, status, contentType: mime, bytes, text, redirects };
  }
}
