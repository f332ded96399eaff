/**
 * The web chat's people and its defences, in a real headless Chromium against the whole gateway: an
 * invite link pairs a second person, and neither sees the other's sessions, messages or search hits;
 * hostile content (Markdown with HTML and `javascript:` links, tool lines, file names, the user's own
 * text) runs nothing and loads nothing from elsewhere; plain requests without a login, without the
 * CSRF token or from another site change nothing; the page works on a 390×844 phone screen.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, ElementHandle, Page } from "puppeteer-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { messageText } from "../fakes/llm/index.js";
import { launchChromium } from "../helpers/chromium.js";
import type { Harness } from "../helpers/gateway-harness.js";
import {
  expectNoOverflow,
  login,
  openPage,
  PASSWORD,
  replies,
  SHOTS,
  say,
  startWebGateway,
  waitForReply,
} from "./web-chat-helpers.js";

let browser: Browser;
let h: Harness | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** The owner makes an invite link on its page; a new browser profile joins with it. */
async function invite(owner: Page, base: string, name: string): Promise<Page> {
  await owner.click("#invite");
  await owner.type("#invite-name", name);
  await owner.click("#invite-make");
  const link = await owner.waitForSelector("#invite-link input");
  const url = await link!.evaluate((e) => (e as HTMLInputElement).value);
  expect(url.startsWith(`${base}/chat/invite/`)).toBe(true);
  await owner.keyboard.press("Escape");
  const { page } = await openPage(browser, base);
  await page.goto(url);
  await Promise.all([page.waitForNavigation(), page.click("::-p-aria(Join)")]);
  await page.waitForSelector("#input");
  return page;
}

const sessionNames = (page: Page) =>
  page.$$eval("#sessions .session .name", (els) => els.map((e) => e.textContent ?? ""));

describe("web chat: people and defences", () => {
  it("an invited person has their own sessions; neither sees the other's", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    h.llm.setDefault((r) => ({ text: `echo: ${messageText(r.messages.at(-1))}` }));
    const { page: owner } = await openPage(browser, base);
    await login(owner, base);
    await say(owner, "owner secret plan");
    await waitForReply(owner, "echo: owner secret plan");
    const guest = await invite(owner, base, "Alice");
    // The guest is not an owner: no invites.
    expect(await guest.$eval("#invite", (e) => (e as HTMLElement).hidden)).toBe(true);
    await say(guest, "guest question");
    await waitForReply(guest, "echo: guest question");
    expect(await replies(guest)).toEqual(["echo: guest question"]);
    await guest.waitForFunction(() => document.querySelectorAll("#sessions .session").length === 1);
    expect(await sessionNames(guest)).toEqual(["guest question"]);
    // Search finds only one's own messages.
    await guest.type("#search", "secret");
    await guest.waitForSelector("#hits li.muted");
    expect(await guest.$eval("#hits", (e) => e.textContent ?? "")).toContain("No messages match");

    await owner.reload();
    await waitForReply(owner, "echo: owner secret plan");
    expect(await replies(owner)).toEqual(["echo: owner secret plan"]);
    await owner.waitForFunction(() => document.querySelectorAll("#sessions .session").length === 1);
    expect(await sessionNames(owner)).toEqual(["owner secret plan"]);
    await owner.type("#search", "guest");
    await owner.waitForSelector("#hits li.muted");
    // The guest's chat is a chat of its own, admitted by the pairing store.
    const approved = h.state.pairing.approved().filter((a) => a.platform === "webchat");
    expect(approved).toHaveLength(1);
  });

  it("hostile content runs nothing and loads nothing from another site", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const hostile = [
      "Look: <script>alert('script')</script> <img src=x onerror=alert('img')>",
      "[click me](javascript:alert('link')) <a href=\"javascript:alert('a')\">raw</a>",
      '![pixel](https://evil.example/track.png) <iframe src="https://evil.example/"></iframe>',
      "<style>body{display:none}</style> [data](data:text/html,<script>alert('data')</script>)",
      "```html\n<script>alert('code')</script><img src=x onerror=alert('code')>\n```",
    ].join("\n\n");
    h.llm.script(
      {
        toolCalls: [
          { name: "terminal", arguments: { command: "echo '<img src=x onerror=alert(\"tool\")>'" } },
        ],
      },
      { text: hostile },
    );
    const { page, dialogs, foreign, errors } = await openPage(browser, base);
    await login(page, base);
    const named = join(h.homeDir, `"><img src=x onerror=alert('file')>.txt`);
    writeFileSync(named, "hello");
    await ((await page.$("#file")) as ElementHandle<HTMLInputElement>).uploadFile(named);
    await page.waitForSelector(".chip");
    await say(page, "<img src=x onerror=alert('mine')> tell me something");
    await waitForReply(page, "Look:");
    await page.waitForSelector("pre code.hljs");
    // Everything is shown as text; links that could run script are plain text.
    const text = await page.$eval("#turns", (e) => e.textContent ?? "");
    expect(text).toContain("<script>alert('script')</script>");
    expect(text).toContain("<img src=x onerror=alert('mine')>");
    expect(text).toContain(`"><img src=x onerror=alert('file')>.txt`);
    expect(text).toContain('onerror=alert("tool")');
    await page.click("::-p-text(click me)");
    const active = await page.evaluate(() => ({
      handlers: document.querySelectorAll("[onerror], [onclick], [onload]").length,
      inlineScripts: document.querySelectorAll("script:not([src]), iframe, style").length,
      badLinks: [...document.querySelectorAll("a")].filter((a) => !/^(https?:|mailto:)/.test(a.href)).length,
    }));
    expect(active).toEqual({ handlers: 0, inlineScripts: 0, badLinks: 0 });
    await page.type("#search", "onerror");
    await page.waitForSelector("#hits li");
    await new Promise((r) => setTimeout(r, 300));
    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    const csp = (await fetch(`${base}/chat`)).headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("refuses requests without a login, without the CSRF token, and forms from another site", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const send = (headers: Record<string, string>) =>
      fetch(`${base}/chat/api/send`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ text: "hi" }),
      });
    expect((await send({})).status).toBe(401);
    expect((await fetch(`${base}/chat/events`)).status).toBe(401);
    expect((await fetch(`${base}/chat/api/history`)).status).toBe(401);
    const form = (origin: string) =>
      fetch(`${base}/chat/login`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", origin },
        body: `password=${PASSWORD}`,
      });
    expect((await form("https://evil.example")).status).toBe(403);
    const ok = await form(base);
    expect(ok.status).toBe(303);
    const setCookie = ok.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\/chat/);
    const cookie = setCookie.split(";")[0]!;
    expect((await send({ cookie })).status).toBe(403);
    expect((await send({ cookie, "x-csrf-token": "x".repeat(43) })).status).toBe(403);
    const page = await (await fetch(`${base}/chat`, { headers: { cookie } })).text();
    const csrf = /herald-csrf" content="([^"]+)"/.exec(page)![1]!;
    expect((await send({ cookie, "x-csrf-token": csrf })).status).toBe(200);
    // Only the owner invites; a used invite link is used up.
    const made = await fetch(`${base}/chat/api/invite`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bob" }),
    });
    const { path } = (await made.json()) as { path: string };
    const join1 = await fetch(`${base}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: base },
    });
    expect(join1.status).toBe(303);
    const bob = join1.headers.get("set-cookie")!.split(";")[0]!;
    const again = await fetch(`${base}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: base },
    });
    expect(again.status).toBe(410);
    const bobPage = await (await fetch(`${base}/chat`, { headers: { cookie: bob } })).text();
    const bobCsrf = /herald-csrf" content="([^"]+)"/.exec(bobPage)![1]!;
    const bobInvites = await fetch(`${base}/chat/api/invite`, {
      method: "POST",
      headers: { cookie: bob, "x-csrf-token": bobCsrf, "content-type": "application/json" },
      body: JSON.stringify({ name: "Eve" }),
    });
    expect(bobInvites.status).toBe(403);
    // A revoked pairing ends the guest's login.
    const bobId = h.state.pairing.approved().find((a) => a.platform === "webchat")!.userId;
    h.state.pairing.revoke("webchat", bobId);
    expect((await fetch(`${base}/chat/api/history`, { headers: { cookie: bob } })).status).toBe(401);
  });

  it("is usable on a 390×844 phone screen", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const table = ["| name | value | notes |", "|---|---|---|", `| a | ${"x".repeat(60)} | long cell |`].join(
      "\n",
    );
    h.llm.script({
      text: `Here is a table and code:\n\n${table}\n\n\`\`\`sh\n${"echo very-long-line ".repeat(12)}\n\`\`\`\n\nAnd a ${"verylongword".repeat(8)}.`,
    });
    const { page } = await openPage(browser, base, { width: 390, height: 844 });
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await login(page, base);
    await say(page, "show me a table");
    await waitForReply(page, "And a");
    await expectNoOverflow(page);
    const composer = await page.$eval("#composer", (e) => e.getBoundingClientRect().bottom);
    expect(composer).toBeLessThanOrEqual(844);
    await page.screenshot({ path: join(SHOTS, "web-chat-phone.png") });
    // The session list is a drawer on a narrow screen.
    expect(await page.$eval("#sidebar", (e) => e.getBoundingClientRect().right)).toBeLessThanOrEqual(0);
    await page.click("#open-sidebar");
    await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().left >= 0);
    await page.waitForSelector("#sessions .session");
    await new Promise((r) => setTimeout(r, 250));
    await page.screenshot({ path: join(SHOTS, "web-chat-phone-sessions.png") });
    await page.click("#close-sidebar");
    // `/` completes commands from the registry.
    await page.focus("#input");
    await page.keyboard.type("/ne");
    await page.waitForSelector("#complete li");
    expect(await page.$eval("#complete", (e) => e.textContent ?? "")).toContain("/new");
    await page.keyboard.press("Tab");
    expect(await page.$eval("#input", (e) => (e as HTMLTextAreaElement).value)).toBe("/new ");
    await page.screenshot({ path: join(SHOTS, "web-chat-phone-commands.png") });
  });
});
