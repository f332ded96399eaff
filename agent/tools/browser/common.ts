/**
 * What the browser tools share: their dependencies, the page report every action answers with, waiting
 * for what an action set off, the URL rule (http and https only) and explaining a refused request.
 */
import type { HTTPResponse, Page } from "puppeteer-core";
import { HeraldError } from "../../../core/errors.js";
import type { WorkspaceAccess } from "../../exec/index.js";
import type { ToolContext } from "../../types.js";
import type { VisionEndpoint } from "../vision/index.js";
import type { BrowserPool, BrowserSession } from "./pool.js";
import type { BrowserProxy } from "./proxy.js";
import { pageOf, takeSnapshot } from "./snapshot.js";

/** Characters of a snapshot page in an action's answer, and in `browser_snapshot` with `full`. */
export const SNAPSHOT_CHARS = 8_000;
export const FULL_SNAPSHOT_CHARS = 40_000;

/** The running parts the tools use; started on the first browser call. */
export interface BrowserRuntime {
  pool: BrowserPool;
  proxy: BrowserProxy;
}

/** What the browser tools run with. */
export interface BrowserToolsDeps {
  /** The pool and proxy, started on first use (loads puppeteer-core then). */
  runtime(): Promise<BrowserRuntime>;
  /** The workspaces screenshots and downloads go to. */
  access: WorkspaceAccess;
  /** The vision model screenshots are shown to; undefined: none. */
  vision?: VisionEndpoint | undefined;
  /** Actions that need the user's approval (`browser.approve`). */
  approve: readonly string[];
  /** `exec.dangerous_commands`: how approvals are given. */
  approvalMode: "manual" | "deny" | "off";
  downloadMaxBytes: number;
}

/** The session of the calling conversation. */
export async function sessionOf(deps: BrowserToolsDeps, ctx: ToolContext): Promise<BrowserSession> {
  const { pool } = await deps.runtime();
  const { chat, userId, sessionKey, sessionId } = ctx.origin;
  return pool.session(sessionKey, sessionId, `${chat.platform}:user:${userId}`);
}

/** The URL's host for progress lines; the text itself when it is no URL. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** The URL to open: http(s) only. @throws HeraldError `invalid_input` for other schemes */
export function checkedUrl(text: string, base?: string): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    try {
      url = new URL(`https://${text}`);
    } catch {
      throw new HeraldError(`${text} is not a URL`, { code: "invalid_input" });
    }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new HeraldError(
      `refused ${url.protocol} URL: the browser opens http and https pages only (file:, chrome:, data: and other schemes are refused)`,
      { code: "invalid_input" },
    );
  return url;
}

/** Why the latest request to `url`'s host was refused by the proxy, if it was (in the last minute). */
export function refusalFor(proxy: BrowserProxy, url: string): string | undefined {
  let host = "";
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return undefined;
  }
  const recent = proxy.refusals().filter((r) => Date.now() - r.at < 60_000);
  const mine = [...recent].reverse().find((r) => r.host === host) ?? recent.at(-1);
  return mine ? `refused ${mine.host}:${mine.port}: ${mine.reason}` : undefined;
}

/** The error of a response the proxy refused, or undefined. */
export async function refusedResponse(response: HTTPResponse | null): Promise<string | undefined> {
  if (response?.headers()["x-herald-refused"] !== "1") return undefined;
  return (await response.text().catch(() => "")).replace(/^Herald refused this request: /, "") || "refused";
}

/**
 * Runs `action` and waits for what it set off: a navigation of the main frame it started (until
 * `load`, within the navigation timeout), else a short pause for scripts to react.
 */
export async function settle(page: Page, action: () => Promise<void>, signal: AbortSignal): Promise<void> {
  let navigating = false;
  const onRequest = (req: import("puppeteer-core").HTTPRequest) => {
    if (req.isNavigationRequest() && req.frame() === page.mainFrame()) navigating = true;
  };
  const stop = new AbortController();
  const nav = page
    .waitForNavigation({ waitUntil: "load", signal: AbortSignal.any([stop.signal, signal]) })
    .then(() => true)
    .catch(() => false);
  page.on("request", onRequest);
  try {
    await action();
    const quick = await Promise.race([nav, new Promise<false>((r) => setTimeout(() => r(false), 400))]);
    if (!quick && navigating) await nav;
  } finally {
    page.off("request", onRequest);
    stop.abort();
  }
}

/** The tab as the model reads it after an action: title, URL, then the first page of its snapshot. */
export async function report(
  session: BrowserSession,
  options: { pageNumber?: number; maxChars?: number; note?: string } = {},
): Promise<string> {
  await session.adopting;
  const page = session.page;
  const snapshot = await takeSnapshot(page, session.refIds);
  session.refs = snapshot.refs;
  session.refIds = snapshot.ids;
  const { text, pages } = pageOf(snapshot.lines, options.pageNumber ?? 1, options.maxChars ?? SNAPSHOT_CHARS);
  const title = await page.title().catch(() => "");
  const n = Math.min(Math.max(options.pageNumber ?? 1, 1), pages);
  const more =
    pages > 1
      ? `\n[snapshot page ${n} of ${pages}: browser_snapshot with page: ${n < pages ? n + 1 : 1} for ${n < pages ? "more" : "the start"}]`
      : "";
  const note = options.note ? `${options.note}\n` : "";
  return `${note}# ${title || "(untitled)"}\nURL: ${page.url()}\n\n${text || "(the page shows nothing)"}${more}`;
}
