/**
 * The web tools on the gateway: their declarations with the search provider and the HTML converter
 * (`createWebTools`; the fetching and extraction load on the first call), and the address checks the
 * HTTP server, the web chat and the workers share. The guarded fetch itself (TLS, decompression, the
 * page extraction) stays in `index.ts`, loaded where something fetches.
 */
export { blockedReason, isLoopbackHost } from "./address.js";
export { type OwnListener, OwnListeners, ownListeners } from "./own-listeners.js";
export { createWebTools, type WebSettings } from "./setup.js";
