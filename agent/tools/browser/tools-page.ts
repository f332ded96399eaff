/**
 * The browser tools that open and read pages: `browser_navigate`, `browser_snapshot`, `browser_back`,
 * `browser_scroll`, `browser_wait`, `browser_console`, `browser_get_images`, `browser_close`.
 */
import { describeError, HeraldError } from "../../../core/errors.js";
import { sleep } from "../../../core/sleep.js";
import type { ToolExecute } from "../../tool-declaration.js";
import {
  type BrowserToolsDeps,
  checkedUrl,
  FULL_SNAPSHOT_CHARS,
  refusalFor,
  refusedResponse,
  report,
  SNAPSHOT_CHARS,
  sessionOf,
} from "./common.js";
import type {
  browserBackParameters,
  browserCloseParameters,
  browserConsoleParameters,
  browserGetImagesParameters,
  browserNavigateParameters,
  browserScrollParameters,
  browserSnapshotParameters,
  browserWaitParameters,
} from "./declaration.js";

/** What the page-reading browser tools do (`declaration.ts` declares them), bound to `deps`, by name. */
export function pageTools(deps: BrowserToolsDeps) {
  const navigate: ToolExecute<typeof browserNavigateParameters> = async (args, ctx) => {
    const url = checkedUrl(args.url);
    const session = await sessionOf(deps, ctx);
    const { proxy } = await deps.runtime();
    let response: Awaited<ReturnType<typeof session.page.goto>>;
    try {
      response = await session.page.goto(url.href, { waitUntil: "load", signal: ctx.signal });
    } catch (err) {
      const refused = refusalFor(proxy, url.href);
      if (refused) return { content: `error: ${refused}`, isError: true };
      throw new HeraldError(`could not open ${url.href}: ${describeError(err)}`, {
        code: "tool_error",
        cause: err,
      });
    }
    const refused = await refusedResponse(response);
    if (refused) {
      await session.page.goto("about:blank").catch(() => undefined);
      return { content: `error: ${refused}`, isError: true };
    }
    const status = response && response.status() >= 400 ? `HTTP ${response.status()}` : undefined;
    return report(session, { note: status });
  };

  const snapshot: ToolExecute<typeof browserSnapshotParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    return report(session, {
      pageNumber: args.page,
      maxChars: args.full ? FULL_SNAPSHOT_CHARS : SNAPSHOT_CHARS,
    });
  };

  const back: ToolExecute<typeof browserBackParameters> = async (_args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const response = await session.page.goBack({ waitUntil: "load", signal: ctx.signal });
    return report(session, { note: response ? undefined : "(there was no previous page)" });
  };

  const scroll: ToolExecute<typeof browserScrollParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const screens = (args.direction === "down" ? 1 : -1) * (args.amount ?? 1);
    const at = await session.page.evaluate(async (n: number) => {
      window.scrollBy(0, n * window.innerHeight);
      await new Promise((r) => setTimeout(r, 200));
      return { y: Math.round(window.scrollY), height: document.documentElement.scrollHeight };
    }, screens);
    return `scrolled ${args.direction}: now at ${at.y} of ${at.height} pixels. Take a snapshot or a screenshot to read it.`;
  };

  const wait: ToolExecute<typeof browserWaitParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    if (!args.text) {
      await sleep(args.ms ?? 1000, ctx.signal);
      return report(session);
    }
    const timeout = args.ms ?? 10_000;
    const found = await session.page
      .waitForFunction(
        // The text as shown (innerText), not hidden nodes' text.
        // biome-ignore lint/performance/useDomNodeTextContent: what the user would see is the point.
        (t: string) => document.body?.innerText.includes(t) ?? false,
        { timeout, signal: ctx.signal },
        args.text,
      )
      .then(() => true)
      .catch(() => false);
    if (!found) return { content: `"${args.text}" did not appear within ${timeout} ms.`, isError: true };
    return report(session, { note: `"${args.text}" is on the page.` });
  };

  const consoleTool: ToolExecute<typeof browserConsoleParameters> = async (_args, ctx) => {
    const session = await sessionOf(deps, ctx);
    return session.console.length ? session.console.join("\n") : "(no console messages)";
  };

  const images: ToolExecute<typeof browserGetImagesParameters> = async (_args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const found = await session.page.$$eval("img", (list) =>
      list.slice(0, 100).map((img) => ({
        src: img.currentSrc || img.src,
        alt: img.alt,
        size: `${img.naturalWidth}x${img.naturalHeight}`,
      })),
    );
    if (found.length === 0) return "(no images on this page)";
    return found
      .map((i) => `${i.src} — ${i.alt ? JSON.stringify(i.alt) : "(no alt text)"} ${i.size}`)
      .join("\n");
  };

  const close: ToolExecute<typeof browserCloseParameters> = async (_args, ctx) => {
    const { pool } = await deps.runtime();
    const had = pool.has(ctx.origin.sessionKey);
    await pool.closeSession(ctx.origin.sessionKey, "browser_close");
    return had ? "closed the browser of this conversation" : "no browser was open";
  };

  return {
    browser_navigate: navigate,
    browser_snapshot: snapshot,
    browser_back: back,
    browser_scroll: scroll,
    browser_wait: wait,
    browser_console: consoleTool,
    browser_get_images: images,
    browser_close: close,
  };
}
