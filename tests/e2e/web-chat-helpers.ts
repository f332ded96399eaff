/**
 * The web chat's end-to-end helpers: a gateway with the web chat on (the scripted fake model, the
 * dashboard's password), a logged-in browser page, and what a person sees on it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { expect } from "vitest";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

export const PASSWORD = "correct-horse-battery-staple";
// Screenshots are taken on every run; they replace the README's only when HERALD_SCREENSHOTS_DIR says
// where (docs/screenshots), so a test run leaves the tree clean.
export const SHOTS = process.env["HERALD_SCREENSHOTS_DIR"] ?? mkdtempSync(join(tmpdir(), "herald-shots-"));

/** A gateway serving /chat with the owner's password. */
export function startWebGateway(env: Record<string, string> = {}): Promise<Harness> {
  return startHarness({ env: { WEBCHAT_ENABLED: "true", DASHBOARD_PASSWORD: PASSWORD, ...env } });
}

/** A new page (its own cookies: an incognito context), watching for dialogs and foreign requests. */
export async function openPage(
  browser: Browser,
  base: string,
  size: { width: number; height: number } = { width: 1100, height: 760 },
): Promise<{ page: Page; dialogs: string[]; foreign: string[]; errors: string[] }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport(size);
  const dialogs: string[] = [];
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("request", (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith("data:")) foreign.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, dialogs, foreign, errors };
}

/** Logs in on `page` with the password and waits for the conversation. */
export async function login(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/chat`);
  await page.type("input[name=password]", PASSWORD);
  await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
  await page.waitForSelector("#input");
}

/** Types `text` into the composer and presses Enter. */
export async function say(page: Page, text: string): Promise<void> {
  await page.focus("#input");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

/** The text of every reply bubble on the page. */
export function replies(page: Page): Promise<string[]> {
  return page.$$eval(".msg.bot .bubble", (els) => els.map((e) => (e.textContent ?? "").trim()));
}

/** Waits until the page shows a finished reply (no longer streaming) containing `text`. */
export async function waitForReply(page: Page, text: string, timeout = 15_000): Promise<void> {
  await page.waitForFunction(
    (t) =>
      [...document.querySelectorAll(".msg.bot:not(.streaming) .bubble")].some((e) =>
        (e.textContent ?? "").includes(t),
      ),
    { timeout },
    text,
  );
}

/** Nothing on the page is wider than the viewport (no sideways scrolling). */
export async function expectNoOverflow(page: Page): Promise<void> {
  const wide = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width)
      out.push(`document ${document.documentElement.scrollWidth}`);
    for (const el of document.querySelectorAll(".app *")) {
      const r = el.getBoundingClientRect();
      const hiddenAway = getComputedStyle(el.closest(".sidebar") ?? el).transform !== "none";
      if (r.width > 0 && r.right > width + 1 && !hiddenAway && !el.closest(".table-wrap, pre"))
        out.push(`${el.tagName}.${(el as HTMLElement).className} ${Math.round(r.right)}`);
    }
    return out;
  });
  expect(wide).toEqual([]);
}
