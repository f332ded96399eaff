/**
 * The web module: a guarded fetch for agent tools (`safeFetch`), a guarded fetch-compatible function
 * for plugins (`createGuardedFetch`), page extraction to Markdown (`extractPage`) and web search providers
 * (`createWebSearchProvider`). Imports only the kernel.
 *
 * Loading: importing this module loads none of the heavy libraries. The HTML → Markdown libraries
 * (linkedom, Readability, turndown: about half a second) load on the first page converted, through
 * `inlineHtmlConverter` or in the converter's worker thread; undici on the first `createGuardedFetch`
 * request. A tool that needs a heavy library follows the same rule: a type-only import at the top, and
 * `await import()` inside the call that needs it (memoised by the module system), so a gateway that
 * never runs the tool never loads it.
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
export { type OwnListener, OwnListeners, ownListeners } from "./own-listeners.js";
export { portOf, systemLookup } from "./resolve.js";
export { DEFAULT_USER_AGENT, imageTypeOf, isReadableType, safeFetch } from "./safe-fetch.js";
export * from "./search/index.js";
export { createWebTools, type WebSettings } from "./setup.js";
export type * from "./types.js";
