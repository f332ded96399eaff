/**
 * The browser tools that open and read pages: `browser_navigate`, `browser_snapshot`, `browser_back`,
 * `browser_scroll`, `browser_wait`, `browser_console`, `browser_get_images`, `browser_close`.
 */
import { z } from "zod";
import { describeError, HeraldError } from "../../../core/errors.js";
import { sleep } from "../../../core/sleep.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import {
  type BrowserToolsDeps,
  checkedUrl,
  FULL_SNAPSHOT_CHARS,
  hostOf,
  refusalFor,
  refusedResponse,
  report,
  SNAPSHOT_CHARS,
  sessionOf,
} from "./common.js";

/** The page-reading browser tools, bound to `deps`. */
export function pageTools(deps: BrowserToolsDeps): Tool[] {
  const navigate = defineTool({
    name: "browser_navigate",
    description:
      "Open a URL in a real browser (JavaScript runs, cookies persist for this conversation). Returns the title, the final URL and a snapshot of the page: its elements with refs like [e12] to use with browser_click, browser_type and browser_select.",
    parameters: z.object({ url: z.string().min(1).describe("An http(s) URL.") }),
    toolset: "browser",
    label: (args) => `🌐 ${hostOf(args.url)}`,
    async execute(args, ctx) {
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
    },
  });

  const snapshot = defineTool({
    name: "browser_snapshot",
    description:
      "The current page as an accessibility tree: headings, text, and the elements you can act on with refs like [e12]. Refs change with every snapshot; use the latest.",
    parameters: z.object({
      full: z
        .boolean()
        .optional()
        .describe(`Up to ${FULL_SNAPSHOT_CHARS} characters (default ${SNAPSHOT_CHARS}).`),
      page: z.number().int().min(1).optional().describe("Which page of a long snapshot (default 1)."),
    }),
    toolset: "browser",
    label: () => "📄 snapshot",
    async execute(args, ctx) {
      const session = await sessionOf(deps, ctx);
      return report(session, {
        pageNumber: args.page,
        maxChars: args.full ? FULL_SNAPSHOT_CHARS : SNAPSHOT_CHARS,
      });
    },
  });

  const back = defineTool({
    name: "browser_back",
    description: "Go back to the previous page of this tab. Returns its snapshot.",
    parameters: z.object({}),
    toolset: "browser",
    label: () => "⬅️ back",
    async execute(_args, ctx) {
      const session = await sessionOf(deps, ctx);
      const response = await session.page.goBack({ waitUntil: "load", signal: ctx.signal });
      return report(session, { note: response ? undefined : "(there was no previous page)" });
    },
  });

  const scroll = defineTool({
    name: "browser_scroll",
    description: "Scroll the page (for pages that load more as you scroll, and for screenshots).",
    parameters: z.object({
      direction: z.enum(["up", "down"]),
      amount: z.number().positive().max(50).optional().describe("Screens to scroll (default 1)."),
    }),
    toolset: "browser",
    label: (args) => `↕️ scroll ${args.direction}`,
    async execute(args, ctx) {
      const session = await sessionOf(deps, ctx);
      const screens = (args.direction === "down" ? 1 : -1) * (args.amount ?? 1);
      const at = await session.page.evaluate(async (n: number) => {
        window.scrollBy(0, n * window.innerHeight);
        await new Promise((r) => setTimeout(r, 200));
        return { y: Math.round(window.scrollY), height: document.documentElement.scrollHeight };
      }, screens);
      return `scrolled ${args.direction}: now at ${at.y} of ${at.height} pixels. Take a snapshot or a screenshot to read it.`;
    },
  });

  const wait = defineTool({
    name: "browser_wait",
    description: "Wait until a text appears on the page, or for a number of milliseconds.",
    parameters: z.object({
      text: z.string().min(1).optional().describe("Wait until the page shows this text."),
      ms: z.number().int().min(1).max(30_000).optional().describe("How long to wait (at most 30000)."),
    }),
    toolset: "browser",
    label: (args) => (args.text ? `⏳ wait for "${args.text}"` : `⏳ wait ${args.ms ?? 1000} ms`),
    async execute(args, ctx) {
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
    },
  });

  const consoleTool = defineTool({
    name: "browser_console",
    description: "The page's recent console messages and script errors (the latest 100).",
    parameters: z.object({}),
    toolset: "browser",
    label: () => "🧾 console",
    async execute(_args, ctx) {
      const session = await sessionOf(deps, ctx);
      return session.console.length ? session.console.join("\n") : "(no console messages)";
    },
  });

  const images = defineTool({
    name: "browser_get_images",
    description: "The images of the current page: their URL (src) and alternative text, the first 100.",
    parameters: z.object({}),
    toolset: "browser",
    label: () => "🖼️ images",
    async execute(_args, ctx) {
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
    },
  });

  const close = defineTool({
    name: "browser_close",
    description:
      "Close this conversation's browser: its tabs, cookies and logins. The next call starts afresh.",
    parameters: z.object({}),
    toolset: "browser",
    label: () => "🌐 close the browser",
    async execute(_args, ctx) {
      const { pool } = await deps.runtime();
      const had = pool.has(ctx.origin.sessionKey);
      await pool.closeSession(ctx.origin.sessionKey, "browser_close");
      return had ? "closed the browser of this conversation" : "no browser was open";
    },
  });

  return [navigate, snapshot, back, scroll, wait, consoleTool, images, close];
}
