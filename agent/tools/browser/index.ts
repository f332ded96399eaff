/**
 * The browser toolset ("browser"): the agent opens pages in a real, headless Chromium, reads them as an
 * accessibility tree with refs (`[e12] button "Sign in"`), clicks, types, selects, presses keys,
 * scrolls, goes back, waits, takes screenshots (shown to the vision model when one is configured),
 * reads the console and the images, and downloads files into the workspace.
 *
 * Design:
 * - **One browser per process**, Debian's Chromium through puppeteer-core (chosen over playwright-core:
 *   it drives the system's Chromium with no browser download or patched build, it was already the
 *   dashboard tests' driver, and the toolset needs only Chromium). puppeteer-core loads on the first
 *   browser call; the browser starts then and closes after `browser.idle_minutes` without use. Or a
 *   browser elsewhere over CDP (`browser.cdp_url`); its contexts get the same proxy, which it must
 *   reach at 127.0.0.1 (a sidecar sharing the network namespace, or the same machine).
 * - **One incognito context per session** (cookies live as long as the session's browser, or per user
 *   across sessions with `browser.persist_profile`: `profiles.ts`), closed when
 *   the session ends, on `browser_close`, after the idle time, or when the caps need the room:
 *   `browser.max_contexts` per process (least recently used first), `browser.max_pages` tabs per
 *   session, `browser.max_memory_mb` of the browser's processes (PSS summed over its process tree,
 *   `memory.ts`: past it other sessions' contexts close before a new one opens).
 * - **The network rules of web_extract** (`proxy.ts`): every context's requests go through Herald's
 *   forward proxy, loopback included (`<-loopback>`), which resolves each host, checks every address
 *   (public only unless `browser.allow_private_hosts` or `web.allow_private`; Herald's own listeners
 *   never) and connects to the checked address. The browser-wide proxy refuses everything, so
 *   Chromium's own background traffic never leaves. Chromium resolves no names itself, WebRTC sends
 *   no UDP outside the proxy, and QUIC is off. Only http(s) URLs are opened (`file:`, `chrome:`,
 *   `data:` refused; Chromium refuses pages' own navigations to them). Downloads by Chromium are denied;
 *   `browser_download` fetches through the same proxy into the workspace, capped.
 * - **Sandboxed**: a root gateway runs Chromium as `nobody` with Chromium's own sandbox (no access to
 *   the gateway's files, a minimal environment without its secrets); see `launch.ts`.
 * - **Approvals** (`approval.ts`, `tools-act.ts`): with `browser.approve: [submit]` and
 *   `exec.dangerous_commands: manual`, sending a form by POST waits for `/approve`; `download` likewise.
 */

export { treeMemory } from "./memory.js";
export { type BrowserProxy, startBrowserProxy } from "./proxy.js";
export { type BrowserSettings, type BrowserTools, createBrowserTools, privateAllow } from "./setup.js";
