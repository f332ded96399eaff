/**
 * The browser tools that make files in the session's workspace (through the execution backend's
 * files, where its commands run, under its quota): `browser_screenshot` (a PNG, shown to the vision
 * model when one is configured) and `browser_download` (fetched through the browser's proxy with the
 * tab's cookies, so the same address rules apply, and cut off past `browser.download_max_bytes`;
 * Chromium's own downloads are denied).
 */
import { posix } from "node:path";
import type { fetch as UndiciFetch } from "undici";
import { describeError, HeraldError } from "../../../core/errors.js";
import { ownerOf } from "../../exec/index.js";
import type { ToolExecute } from "../../tool-declaration.js";
import type { ToolContext } from "../../types.js";
import { askVision } from "../vision/index.js";
import { gateAction } from "./approval.js";
import { type BrowserToolsDeps, checkedUrl, hostOf, refusalFor, sessionOf } from "./common.js";
import type { browserDownloadParameters, browserScreenshotParameters } from "./declaration.js";
import type { BrowserSession } from "./pool.js";
import { elementOf } from "./snapshot.js";

const DESCRIBE =
  "Describe this screenshot of a web page: what it shows, its visible text and anything notable.";

/** A file name safe in any workspace: letters, digits, dot, dash and underscore. */
function safeName(name: string, fallback: string): string {
  const clean = name
    .replace(/[^\w.-]+/g, "_")
    .replace(/^\.+/, "")
    .slice(-120);
  return clean || fallback;
}

/** The name a response gives its file, else the URL's last segment. */
function fileNameOf(disposition: string | null, url: URL): string {
  const star = /filename\*\s*=\s*[^']*''([^;]+)/i.exec(disposition ?? "")?.[1];
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition ?? "")?.[1];
  let name = plain ?? "";
  try {
    if (star) name = decodeURIComponent(star);
  } catch {}
  return safeName(posix.basename(name || decodeURIComponent(url.pathname)), "download");
}

/** The bytes of a body, failing past `maxBytes` (the write then fails and leaves no file). */
async function* capped(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  url: string,
): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes)
      throw new HeraldError(
        `${url} is larger than browser.download_max_bytes (${maxBytes} bytes); nothing was saved`,
        {
          code: "invalid_input",
        },
      );
    yield chunk;
  }
}

async function download(deps: BrowserToolsDeps, ctx: ToolContext, url: URL, referer: string, cookie: string) {
  const { proxy } = await deps.runtime();
  // undici loads with the first download, not with the gateway (agent/tools/web/index.ts).
  const { ProxyAgent, fetch: undiciFetch } = await import("undici");
  const dispatcher = new ProxyAgent({ uri: proxy.pagesUrl });
  try {
    let res: Awaited<ReturnType<typeof UndiciFetch>>;
    try {
      res = await undiciFetch(url, {
        dispatcher,
        signal: ctx.signal,
        headers: { ...(cookie ? { cookie } : {}), referer },
      });
    } catch (err) {
      const refused = refusalFor(proxy, url.href);
      throw new HeraldError(refused ?? `could not download ${url.href}: ${describeError(err)}`, {
        code: refused ? "invalid_input" : "tool_error",
        cause: err,
      });
    }
    if (res.headers.get("x-herald-refused") === "1")
      throw new HeraldError((await res.text()).replace(/^Herald refused this request: /, ""), {
        code: "invalid_input",
      });
    if (!res.ok || !res.body)
      throw new HeraldError(`${url.href} answered HTTP ${res.status}`, { code: "tool_error" });
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > deps.downloadMaxBytes) {
      await res.body.cancel();
      throw new HeraldError(
        `${url.href} is ${declared} bytes, over browser.download_max_bytes (${deps.downloadMaxBytes}); nothing was saved`,
        { code: "invalid_input" },
      );
    }
    const open = await deps.access.open(ownerOf(ctx.origin), ctx.signal);
    const rel = posix.join(
      "downloads",
      fileNameOf(res.headers.get("content-disposition"), new URL(res.url || url.href)),
    );
    const outcome = await open.files.write(rel, capped(res.body, deps.downloadMaxBytes, url.href));
    return { shown: open.shown(rel), type: res.headers.get("content-type") ?? "unknown type", outcome };
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}

/** The URL a link's ref points at, else `url`. @throws HeraldError `invalid_input` when neither */
async function hrefOf(
  session: BrowserSession,
  ref: string | undefined,
  url: string | undefined,
): Promise<string> {
  let href = url;
  if (ref) {
    const target = session.refs.get(ref);
    const handle = target && (await elementOf(target));
    if (!handle)
      throw new HeraldError(`${ref} is not on the page; take a new snapshot`, { code: "invalid_input" });
    href = await handle.evaluate((el) => (el as HTMLAnchorElement).href || el.getAttribute("src") || "");
  }
  if (!href) throw new HeraldError("give the ref of a link or a url", { code: "invalid_input" });
  return href;
}

/** What the file-making browser tools do (`declaration.ts` declares them), bound to `deps`, by name. */
export function fileTools(deps: BrowserToolsDeps) {
  const screenshot: ToolExecute<typeof browserScreenshotParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const bytes = await session.page.screenshot({ type: "png", fullPage: args.full_page ?? false });
    const open = await deps.access.open(ownerOf(ctx.origin), ctx.signal);
    const rel = posix.join(
      "screenshots",
      `${safeName(hostOf(session.page.url()), "page")}-${Date.now()}.png`,
    );
    await open.files.write(rel, bytes);
    const saved = `Saved the screenshot of ${session.page.url()} as ${open.shown(rel)} (${bytes.byteLength} bytes).`;
    if (!deps.vision) return `${saved} No vision model is configured to look at it.`;
    const answer = await askVision(
      deps.vision,
      { bytes, mime: "image/png" },
      args.question ?? DESCRIBE,
      ctx.signal,
    );
    return `${saved}\nWhat the vision model sees:\n${answer}`;
  };

  const downloadTool: ToolExecute<typeof browserDownloadParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const href = await hrefOf(session, args.ref, args.url);
    const url = checkedUrl(href, session.page.url());
    if (deps.approve.includes("download") && deps.approvalMode !== "off") {
      const held = await gateAction(deps.approvalMode, ctx, {
        command: `download ${url.href}`,
        ruleId: "browser-download",
        ruleDescription: "downloading a file from a web page (browser.approve: download)",
      });
      if (held) return held;
    }
    // The cookies the tab would send to that URL (CDP's own answer: domain, path, Secure and
    // SameSite rules applied by Chromium).
    const cdp = await session.page.createCDPSession();
    const { cookies } = await cdp
      .send("Network.getCookies", { urls: [url.href] })
      .finally(() => cdp.detach());
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
    const saved = await download(deps, ctx, url, session.page.url(), cookie);
    return `Downloaded ${url.href} as ${saved.shown} (${saved.type}).`;
  };

  return { browser_screenshot: screenshot, browser_download: downloadTool };
}
