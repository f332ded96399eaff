/**
 * Starting the browser: Debian's Chromium through puppeteer-core (loaded here, on the first browser
 * call, never at start-up), or a browser elsewhere over CDP. A root gateway runs Chromium as `nobody`
 * (through `setpriv`), so Chromium's own sandbox works and the browser cannot read the gateway's files;
 * a non-root gateway runs it as itself, sandboxed. Where the kernel refuses Chromium's sandbox, it runs
 * without (logged). The environment it gets is a minimal one: no secrets of the gateway's.
 */
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext } from "puppeteer-core";
import { describeError, HeraldError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import { INSTALL_CHROMIUM } from "./settings.js";

/** Where a root gateway's Chromium runs: `nobody`. */
const NOBODY = { uid: 65534, gid: 65534 };
const SETPRIV = "/usr/bin/setpriv";

/** A browser this process drives, launched or connected. */
export interface BrowserHandle {
  readonly browser: Browser;
  /** The browser's process id when it was launched here (memory is measured from it). */
  readonly pid: number | undefined;
  /** How it runs, for the log and doctor: "sandboxed as nobody", "over CDP at …". */
  readonly how: string;
  /** A new incognito context whose every request goes through `proxyUrl`. */
  newContext(proxyUrl: string): Promise<BrowserContext>;
  /** Closes a launched browser (and its profile) or disconnects from a remote one. Idempotent. */
  close(): Promise<void>;
}

/** Options of `openBrowser`. */
export interface OpenBrowserOptions {
  executable: string;
  cdpUrl?: string | undefined;
  /** The browser-wide proxy (refuses everything: only Chromium's own background requests use it). */
  closedProxyUrl: string;
  logger: Logger;
}

/** Chromium's switches: puppeteer's usual ones, the proxy for everything, no local name lookups. */
function chromiumArgs(profile: string, proxyUrl: string, sandbox: boolean): string[] {
  return [
    "--headless=new",
    "--remote-debugging-pipe",
    `--user-data-dir=${profile}`,
    `--proxy-server=${proxyUrl}`,
    // Loopback too goes through the proxy (Chromium bypasses it by default).
    "--proxy-bypass-list=<-loopback>",
    // Chromium hands the proxy host names; it resolves none itself (a lookup it tried would fail).
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    // WebRTC may not send UDP outside the proxy.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-client-side-phishing-detection",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AcceptCHFrame,NetworkTimeServiceQuerying,AutofillServerCommunication",
    "--disable-search-engine-choice-screen",
    "--no-first-run",
    "--no-default-browser-check",
    "--password-store=basic",
    "--use-mock-keychain",
    "--mute-audio",
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    // A page's script heap is capped (a runaway page ends with "out of memory" in its own tab).
    "--js-flags=--max-old-space-size=512",
    ...(sandbox ? [] : ["--no-sandbox"]),
    "about:blank",
  ];
}

/** Launches Chromium, or connects to `cdpUrl`. @throws HeraldError `tool_error` saying what to fix */
export async function openBrowser(options: OpenBrowserOptions): Promise<BrowserHandle> {
  const { default: puppeteer } = await import("puppeteer-core");
  if (options.cdpUrl) {
    const url = options.cdpUrl;
    const browser = await puppeteer
      .connect(/^wss?:/.test(url) ? { browserWSEndpoint: url } : { browserURL: url })
      .catch((err: unknown) => {
        throw new HeraldError(
          `the browser at browser.cdp_url (${url}) does not answer: ${describeError(err)}`,
          {
            code: "tool_error",
            cause: err,
            retryable: true,
          },
        );
      });
    return handle(browser, undefined, `over CDP at ${url}`, async () => {
      await browser.disconnect();
    });
  }
  if (!existsSync(options.executable))
    throw new HeraldError(`${options.executable} is missing: ${INSTALL_CHROMIUM}`, { code: "tool_error" });
  const asNobody = process.getuid?.() === 0 && existsSync(SETPRIV);
  const profile = mkdtempSync(join(tmpdir(), "herald-browser-"));
  if (asNobody) chownSync(profile, NOBODY.uid, NOBODY.gid);
  const env = { HOME: profile, PATH: "/usr/bin:/bin", LANG: process.env["LANG"] ?? "C.UTF-8" };
  const launch = (sandbox: boolean) => {
    const args = chromiumArgs(profile, options.closedProxyUrl, sandbox);
    const command = asNobody
      ? {
          executablePath: SETPRIV,
          args: [
            `--reuid=${NOBODY.uid}`,
            `--regid=${NOBODY.gid}`,
            "--clear-groups",
            "--",
            options.executable,
            ...args,
          ],
        }
      : { executablePath: options.executable, args };
    return puppeteer.launch({
      ...command,
      ignoreDefaultArgs: true,
      pipe: true,
      env,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  };
  const who = asNobody ? "as nobody" : "as this user";
  let browser: Browser;
  let how = `sandboxed ${who}`;
  try {
    browser = await launch(true);
  } catch (err) {
    // The kernel may refuse the sandbox its namespaces (containers without user namespaces).
    options.logger.warn(
      { error: describeError(err) },
      "Chromium's sandbox did not start; the browser runs without it",
    );
    how = `without Chromium's sandbox, ${who}`;
    browser = await launch(false).catch((again: unknown) => {
      rmSync(profile, { recursive: true, force: true });
      throw new HeraldError(`Chromium (${options.executable}) did not start: ${describeError(again)}`, {
        code: "tool_error",
        cause: again,
      });
    });
  }
  // The start-up tab of the default context is never used: its renderer would cost ~20 MB.
  for (const page of await browser.pages().catch(() => [])) await page.close().catch(() => undefined);
  return handle(browser, browser.process()?.pid, how, async () => {
    await browser.close().catch(() => browser.process()?.kill("SIGKILL"));
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
}

function handle(
  browser: Browser,
  pid: number | undefined,
  how: string,
  end: () => Promise<void>,
): BrowserHandle {
  let closing: Promise<void> | undefined;
  return {
    browser,
    pid,
    how,
    newContext: (proxyUrl) =>
      browser.createBrowserContext({
        proxyServer: proxyUrl,
        proxyBypassList: ["<-loopback>"],
        // Downloads never land on disk through Chromium: browser_download fetches through the proxy.
        downloadBehavior: { policy: "deny" },
      }),
    close() {
      closing ??= end();
      return closing;
    },
  };
}
