/**
 * The web module: a guarded fetch for agent tools (`safeFetch`), a guarded fetch-compatible function
 * for plugins (`createGuardedFetch`), page extraction to Markdown (`extractPage`) and web search providers
 * (`createWebSearchProvider`). Imports only the kernel.
 */
export { blockedReason, isLoopbackHost } from "./address.js";
export { WebError, type WebErrorReason } from "./errors.js";
export { extractPage, truncateMarkdown } from "./extract.js";
export { createGuardedFetch } from "./guarded-fetch.js";
export {
  createWorkerHtmlConverter,
  inlineHtmlConverter,
  type WorkerHtmlConverter,
} from "./html-converter.js";
export { htmlToMarkdown } from "./html-to-markdown.js";
export { type OwnListener, OwnListeners, ownListeners } from "./own-listeners.js";
export { portOf, systemLookup } from "./resolve.js";
export { DEFAULT_USER_AGENT, imageTypeOf, isReadableType, safeFetch } from "./safe-fetch.js";
export * from "./search/index.js";
export { createWebTools, type WebSettings } from "./setup.js";
export type * from "./types.js";
