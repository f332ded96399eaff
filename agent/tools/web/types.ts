/** Contracts of the web module: the guarded fetcher and page extraction. Search contracts: `search/types.ts`. */
import type { OwnListeners } from "./own-listeners.js";

/** One resolved address of a host name, as node:dns `lookup({ all: true })` gives it. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to its addresses. Default: node:dns `lookup` with `all: true` (the system
 * resolver, /etc/hosts included). May reject (the fetch then fails with reason `dns`); must not return
 * an empty list for a name that resolved. Tests inject one to map made-up names to 127.0.0.1.
 */
export type HostLookup = (hostname: string, signal?: AbortSignal) => Promise<ResolvedAddress[]>;

/** A host and the address it resolved to, as the private-address policy sees them. */
export interface FetchTarget {
  hostname: string;
  address: string;
}

/**
 * Whether private, loopback and other non-public addresses may be fetched: `true` allows all (an owner
 * who wants the agent to read the intranet), a function decides per host and address (must not throw).
 * @defaultValue false
 */
export type AllowPrivate = boolean | ((target: FetchTarget) => boolean);

/** Options of `safeFetch`. Every limit has a default; every field is optional. */
export interface SafeFetchOptions {
  /** Fires to cancel; the fetch then rejects with a `WebError` of reason `aborted`. */
  signal?: AbortSignal;
  /** Total time for every hop, headers and body. @defaultValue 15_000 */
  timeoutMs?: number;
  /** Largest body read (after decompression); past it the socket is closed. @defaultValue 5_242_880 (5 MB) */
  maxBytes?: number;
  /** Redirects followed, each checked like the first request. @defaultValue 5 */
  maxRedirects?: number;
  /** See `AllowPrivate`. @defaultValue false */
  allowPrivate?: AllowPrivate;
  /** Herald's own listeners, refused whatever `allowPrivate` says. @defaultValue the process's (`ownListeners`) */
  ownListeners?: OwnListeners;
  /** The resolver; see `HostLookup`. @defaultValue node:dns lookup */
  lookup?: HostLookup;
  /** Sent as User-Agent. @defaultValue a current desktop Chrome string */
  userAgent?: string;
  /**
   * The content types read, for callers that want other than pages (`vision_analyze`: images).
   * @defaultValue text, HTML, JSON, XML and PDF (`isReadableType`), as web_extract reads them
   */
  types?: FetchTypes;
}

/** Options of `createGuardedFetch`. */
export interface GuardedFetchOptions {
  /** See `AllowPrivate`; a function is asked per host and address at each connect. @defaultValue false */
  allowPrivate?: AllowPrivate;
  /** Herald's own listeners, refused whatever `allowPrivate` says. @defaultValue the process's (`ownListeners`) */
  ownListeners?: OwnListeners;
  /** The resolver each connection uses; see `HostLookup`. @defaultValue node:dns lookup */
  lookup?: HostLookup;
  /**
   * Ends a refusal's message: who may reach what and how to allow more, e.g. "plugins may reach only
   * public addresses unless …".
   */
  hint: string;
}

/** Which content types a fetch reads, and how refusals name them. */
export interface FetchTypes {
  /** Whether a lowercased MIME type without parameters is read. */
  accepts(mime: string): boolean;
  /** Sent as the Accept header. */
  accept: string;
  /** Ends the refusal "<what>; this URL is <type>", e.g. "vision_analyze reads images". */
  what: string;
}

/** What `safeFetch` read. Non-2xx statuses are returned, not thrown; refused requests throw `WebError`. */
export interface SafeFetchResult {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  /** Lowercased MIME type without parameters, e.g. "text/html", "application/pdf". */
  contentType: string;
  /** The body, decompressed. */
  bytes: Uint8Array;
  /** The body decoded with the page's charset; undefined for PDF. */
  text: string | undefined;
  /** Every URL requested before `url`, in order (empty when there was no redirect). */
  redirects: string[];
}

/**
 * Converts a page's HTML to `{ title, markdown }`; `baseUrl` resolves relative links. Rejects with a
 * `WebError` of reason `aborted` when `signal` fires; other rejections are conversion failures.
 */
export type HtmlConverter = (
  html: string,
  baseUrl: string,
  signal?: AbortSignal,
) => Promise<{ title: string; markdown: string }>;

/** Options of `extractPage`: the fetch options plus the output limits. */
export interface ExtractOptions extends SafeFetchOptions {
  /**
   * Runs HTML → Markdown. Pass `createWorkerHtmlConverter().convert` to keep a large page from blocking
   * the event loop. @defaultValue `inlineHtmlConverter` (in the calling thread)
   */
  convertHtml?: HtmlConverter;
  /** Longest Markdown returned; longer pages are cut and say so. @defaultValue 40_000 */
  maxChars?: number;
  /**
   * Turns a PDF body into text. Without it, a PDF URL is refused with a message saying PDF reading is not
   * configured. May reject; the rejection reaches the caller as is.
   */
  extractPdf?: (bytes: Uint8Array, signal?: AbortSignal) => Promise<string>;
}

/** A page as the agent reads it. */
export interface ExtractedPage {
  title: string;
  /** The URL that answered, after redirects. */
  finalUrl: string;
  markdown: string;
  /** True when `markdown` was cut at `maxChars`. */
  truncated: boolean;
  contentType: string;
}
