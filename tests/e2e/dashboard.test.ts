/**
 * The web dashboard in a real headless Chromium (Debian's `chromium`, driven by puppeteer-core) against
 * the whole gateway: the API server with the scripted fake model, the Telegram adapter on the fake Bot
 * API, the cron service. Plain fetches check what a browser would never send: no login, no or a wrong
 * CSRF token, a form from another site. Screenshots of each page go to docs/screenshots/ for the README.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ApprovalStore } from "../../agent/exec/approvals/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { launchChromium } from "../helpers/chromium.js";
import { chat } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const PASSWORD = "correct-horse-battery-staple";
// Screenshots are taken on every run (a page that cannot render fails); they replace the README's only
// when HERALD_SCREENSHOTS_DIR says where (docs/screenshots), so a test run leaves the tree clean.
const SHOTS = process.env["HERALD_SCREENSHOTS_DIR"] ?? mkdtempSync(join(tmpdir(), "herald-shots-"));

const running = platformPerTest<FakeTelegram>();
const start = (env: Record<string, string> = {}) =>
  startTelegramGateway(running, { TELEGRAM_ALLOWED_USERS: "111", DASHBOARD_PASSWORD: PASSWORD, ...env });

let browser: Browser | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A form POST as a script (not a browser) would send it; no redirects followed. */
async function post(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Logs in with a plain fetch; returns the cookie and the page's CSRF token. */
async function login(base: string): Promise<{ cookie: string; csrf: string }> {
  const res = await post(`${base}/dashboard/login`, { password: PASSWORD });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await fetch(`${base}/dashboard/access`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, csrf };
}

/** Form fields without a label, buttons and links without a name: what a screen reader could not announce. */
function unnamed(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
      const field = el as HTMLInputElement;
      if (!field.labels?.length && !field.getAttribute("aria-label")) out.push(field.outerHTML);
    }
    for (const el of document.querySelectorAll("button, a")) {
      if (!(el.getAttribute("aria-label") ?? el.textContent ?? "").trim()) out.push(el.outerHTML);
    }
    if (!document.querySelector("main h1")) out.push("no h1 in main");
    return out;
  });
}

async function shot(page: Page, name: string): Promise<void> {
  expect(await unnamed(page)).toEqual([]);
  await page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: false });
}

/** Submits the form whose button has accessible name `label` and waits for the page it leads to. */
async function press(page: Page, label: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(`::-p-aria(${label})`)]);
}

describe("dashboard", () => {
  it("refuses without a login, without or with a wrong CSRF token, and forms from another site", async () => {
    const { fake, h } = await start();
    const base = h.apiUrl;
    const page = await fetch(`${base}/dashboard/sessions`, { redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/dashboard/login");
    expect((await fetch(`${base}/dashboard/events`)).status).toBe(401);
    expect(
      (await post(`${base}/dashboard/pairing/approve`, { platform: "telegram", userId: "999" })).status,
    ).toBe(401);
    const wrong = await post(`${base}/dashboard/login`, { password: "not-the-password" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong password");

    const ok = await post(`${base}/dashboard/login`, { password: PASSWORD });
    expect(ok.status).toBe(303);
    const setCookie = ok.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Max-Age=43200/);
    const { cookie, csrf } = await login(base);

    // A stranger asks for access; changes without the token change nothing.
    fake.userSends({ chatId: 999, fromId: 999, text: "hello?" });
    expect((await botReplies(fake, 999, 1))[0]).toMatch(/pairing code/);
    const fields = { platform: "telegram", userId: "999" };
    const missing = await post(`${base}/dashboard/pairing/approve`, fields, { cookie });
    expect(missing.status).toBe(403);
    expect(await missing.text()).toContain("CSRF");
    const forged = await post(
      `${base}/dashboard/pairing/approve`,
      { ...fields, _csrf: "x".repeat(43) },
      { cookie },
    );
    expect(forged.status).toBe(403);
    const otherSite = await post(
      `${base}/dashboard/pairing/approve`,
      { ...fields, _csrf: csrf },
      {
        cookie,
        origin: "https://evil.example",
      },
    );
    expect(otherSite.status).toBe(403);
    expect(h.gateway.runner.access.isAllowed("telegram", "999")).toBe(false);

    // The token of another login does not work either.
    const other = await login(base);
    expect(
      (await post(`${base}/dashboard/pairing/deny`, { ...fields, _csrf: other.csrf }, { cookie })).status,
    ).toBe(403);
    const denied = await post(`${base}/dashboard/pairing/deny`, { ...fields, _csrf: csrf }, { cookie });
    expect(denied.status).toBe(303);
    expect(h.state.pairing.pending()).toHaveLength(0);
    expect(h.gateway.runner.access.isAllowed("telegram", "999")).toBe(false);

    // Logged out, the cookie is worth nothing, and the login's live stream ends.
    const events = await fetch(`${base}/dashboard/events`, { headers: { cookie } });
    expect(events.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = events.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("retry:");
    expect((await post(`${base}/dashboard/logout`, { _csrf: csrf }, { cookie })).status).toBe(303);
    for (;;) if ((await reader.read()).done) break;
    const after = await fetch(`${base}/dashboard/`, { redirect: "manual", headers: { cookie } });
    expect(after.status).toBe(303);
  });

  it("answers a command waiting for approval: the agent's next turn is told, and that command may run once", async () => {
    const { h } = await start();
    const base = h.apiUrl;
    expect((await chat(h, "clean up the disk")).status).toBe(200);
    const session = h.state.sessions.list({ limit: 1 })[0]!;
    const store = new ApprovalStore(h.state.kv("approvals"), 300_000);
    const command = "rm -rf /var/tmp/old";
    h.state.transaction(() =>
      store.request({
        sessionKey: session.key,
        sessionId: session.id,
        chat: session.chat,
        userId: session.userId,
        command,
        ruleId: "recursive-delete",
        ruleDescription: "recursive delete outside the workspace",
      }),
    );
    const { cookie, csrf } = await login(base);
    const listed = await (await fetch(`${base}/dashboard/access`, { headers: { cookie } })).text();
    expect(listed).toContain(command);
    const answered = await post(
      `${base}/dashboard/approvals/approve`,
      { sessionKey: session.key, _csrf: csrf },
      { cookie },
    );
    expect(answered.status).toBe(303);
    await vi.waitFor(() =>
      expect(JSON.stringify(h.llm.requests.at(-1)?.messages)).toContain(
        "The owner approved running this command",
      ),
    );
    expect(store.pending(session.key)).toBeUndefined();
    expect(store.check(session.key, command, ["recursive-delete"])).toBe(true);
    expect(store.check(session.key, command, ["recursive-delete"])).toBe(false);
    const again = await post(
      `${base}/dashboard/approvals/deny`,
      { sessionKey: session.key, _csrf: csrf },
      { cookie },
    );
    expect(again.status).toBe(303);
    const page = await (
      await fetch(`${base}${again.headers.get("location")}`, { headers: { cookie } })
    ).text();
    expect(page).toContain("Nothing is waiting there.");
  });

  it("creates and edits a skill through the skill tool's checks; a refused one keeps what was typed", async () => {
    const { h } = await start();
    const base = h.apiUrl;
    const { cookie, csrf } = await login(base);
    const text =
      "---\nname: tea-timer\ndescription: Times a pot of tea.\n---\n\n# Steps\n\n1. Wait four minutes.\n";
    const created = await post(
      `${base}/dashboard/skills/new`,
      { _csrf: csrf, name: "tea-timer", content: text },
      { cookie },
    );
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toMatch(/^\/dashboard\/skills\/tea-timer\?flash=/);
    expect((await h.gateway.learning.skills.view("tea-timer")).ok).toBe(true);
    const edited = text.replace("four", "five");
    expect(
      (await post(`${base}/dashboard/skills/tea-timer`, { _csrf: csrf, content: edited }, { cookie })).status,
    ).toBe(303);
    const view = await (await fetch(`${base}/dashboard/skills/tea-timer`, { headers: { cookie } })).text();
    expect(view).toContain("Wait five minutes.");
    const leaky = text.replace("Wait four minutes.", "Use the key sk-abcdefghijklmnopqrstuvwxyz0123456789.");
    const refused = await post(
      `${base}/dashboard/skills/tea-timer`,
      { _csrf: csrf, content: leaky },
      { cookie },
    );
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toContain('role="alert"');
    expect(body).toContain("sk-abcdefghijklmnopqrstuvwxyz0123456789");
    const kept = await h.gateway.learning.skills.view("tea-timer");
    expect(kept.ok && kept.message).toContain("Wait five minutes.");
  });

  it("shows a transcript's tool calls with their results, exports it, and resets the session", async () => {
    const { h } = await start();
    const base = h.apiUrl;
    h.llm.script({ toolCalls: [{ name: "skills_list", arguments: {} }] }, { text: "You have three skills." });
    expect((await chat(h, "which skills do I have?")).text).toBe("You have three skills.");
    const session = h.state.sessions.list({ limit: 1 })[0]!;
    const { cookie, csrf } = await login(base);
    const transcript = await (
      await fetch(`${base}/dashboard/sessions/${session.id}`, { headers: { cookie } })
    ).text();
    expect(transcript).toContain("tool call: <code>skills_list</code>");
    expect(transcript).toMatch(/<div class="muted">result<\/div><pre>[^<]*daily-briefing/);
    const json = (await (
      await fetch(`${base}/dashboard/sessions/${session.id}/export?format=json`, { headers: { cookie } })
    ).json()) as { session: { key: string }; messages: { role: string }[] };
    expect(json.session.key).toBe(session.key);
    expect(json.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const md = await (
      await fetch(`${base}/dashboard/sessions/${session.id}/export?format=md`, { headers: { cookie } })
    ).text();
    expect(md).toContain("**tool call** `skills_list`");
    expect(transcript).toMatch(
      /<table id="session-usage">[\s\S]*fake-model[\s\S]*<td class="num">2<\/td><\/tr>/,
    );
    const reset = await post(`${base}/dashboard/sessions/${session.id}/reset`, { _csrf: csrf }, { cookie });
    expect(reset.status).toBe(303);
    expect(h.state.sessions.get(session.id)!.endedAt).toBeDefined();
    expect(h.state.sessions.get(session.id)!.endReason).toBe("manual");
  });

  it("without a password serves only loopback requests that name a loopback host", async () => {
    const { h } = await start({ DASHBOARD_PASSWORD: "" });
    const port = Number(new URL(h.apiUrl).port);
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, path: "/dashboard/", headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await get(`127.0.0.1:${port}`)).toBe(200);
    expect(await get(`localhost:${port}`)).toBe(200);
    // A page of another site that rebinds its name to 127.0.0.1 sends its own name as Host.
    expect(await get(`evil.example:${port}`)).toBe(403);
  });

  it("DASHBOARD_ENABLED=false: no dashboard at all", async () => {
    const { h } = await start({ DASHBOARD_ENABLED: "false" });
    expect((await fetch(`${h.apiUrl}/dashboard/login`)).status).toBe(404);
    expect((await post(`${h.apiUrl}/dashboard/login`, { password: PASSWORD })).status).toBe(404);
  });

  it("in Chromium: log in, watch a chat turn arrive live, search, approve a pairing, run a cron job, edit memory, log out", async () => {
    const { fake, h } = await start();
    const base = h.apiUrl;
    const page = await browser!.newPage();
    await page.setViewport({ width: 1100, height: 760 });
    page.on("dialog", (dialog) => void dialog.accept());

    await page.goto(`${base}/dashboard/`);
    expect(page.url()).toBe(`${base}/dashboard/login`);
    await shot(page, "login");
    await page.type("#password", PASSWORD);
    await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
    expect(page.url()).toBe(`${base}/dashboard/`);
    expect(await page.$eval("h1", (e) => e.textContent)).toBe("Overview");
    // Keyboard: the first Tab reaches the skip link, Enter on it moves to the content.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(page.url()).toBe(`${base}/dashboard/#main`);
    await page.waitForFunction(() => document.getElementById("live-status")?.textContent === "live");

    // The sessions page updates itself when a turn finishes (SSE), no reload.
    await page.goto(`${base}/dashboard/sessions`);
    await page.waitForFunction(() => document.getElementById("live-status")?.textContent === "live");
    expect(await page.$("#sessions-table")).toBeNull();
    const marker = await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
      return 42;
    });
    h.llm.script(
      { toolCalls: [{ name: "skills_list", arguments: {} }] },
      { text: "Noted: pomegranate. I can also use the daily-briefing skill for you." },
    );
    const reply = await chat(h, "The secret fruit is pomegranate, remember it");
    expect(reply.text).toBe("Noted: pomegranate. I can also use the daily-briefing skill for you.");
    await page.waitForSelector("#sessions-table tbody tr");
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(marker);
    expect(await page.$eval("#sessions-table", (e) => e.textContent)).toContain("api:");
    await shot(page, "sessions");

    // Full-text search, then the transcript.
    await page.type("#q", "pomegranate");
    await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
    expect(await page.$eval("#search-results mark", (e) => e.textContent?.toLowerCase())).toBe("pomegranate");
    await shot(page, "search");
    await Promise.all([page.waitForNavigation(), page.click("#search-results a")]);
    const transcript = await page.$eval("main", (e) => e.textContent ?? "");
    expect(transcript).toContain("The secret fruit is pomegranate");
    expect(transcript).toContain("Noted: pomegranate.");
    expect(transcript).toContain("tool call: skills_list");
    await page.click("details.tool summary");
    await shot(page, "transcript");
    const exported = await page.evaluate(async () => {
      const a = [...document.querySelectorAll("a")].find((x) => x.textContent === "Export Markdown")!;
      return (await fetch(a.href)).text();
    });
    expect(exported).toContain("**user**: The secret fruit is pomegranate");

    // A stranger on Telegram asks for access; approving admits them and their next message gets a turn.
    fake.userSends({ chatId: 999, fromId: 999, text: "hi, can I use this?" });
    expect((await botReplies(fake, 999, 1))[0]).toMatch(/pairing code/);
    await page.goto(`${base}/dashboard/access`);
    expect(await page.$eval("#pairing-table", (e) => e.textContent)).toContain("telegram:999");
    await shot(page, "access");
    await press(page, "Approve telegram:999");
    expect(await page.$eval(".flash", (e) => e.textContent)).toBe("Approved telegram:999.");
    expect(await page.$("#no-pairing")).not.toBeNull();
    expect((await botReplies(fake, 999, 2))[1]).toMatch(/approved your access/);
    fake.userSends({ chatId: 999, fromId: 999, text: "now may I?" });
    expect((await botReplies(fake, 999, 3))[2]).toBe("echo: now may I?");

    // A cron job: run it now and see its delivery, then pause it.
    const job = await h.gateway.cron.api.create(
      { schedule: "every 1d", prompt: "Write the daily digest", deliver: "telegram:111", name: "digest" },
      { chat: { platform: "telegram", chatId: "111" }, userId: "111" },
    );
    await page.goto(`${base}/dashboard/cron`);
    expect(await page.$eval("#cron-table", (e) => e.textContent)).toContain("digest");
    await press(page, "Run digest now");
    expect(await page.$eval(".flash", (e) => e.textContent)).toBe(`Run queued: ${job.id}.`);
    const delivered = await botReplies(fake, 111, 1);
    expect(delivered[0]).toContain("Write the daily digest");
    await vi.waitFor(
      async () => {
        await page.reload();
        expect(await page.$eval(`#job-${job.id} .runs`, (e) => e.textContent)).toMatch(/^ok · manual/);
      },
      { timeout: 10_000, interval: 200 },
    );
    await press(page, "Pause digest");
    expect(await page.$eval(`#job-${job.id}`, (e) => e.textContent)).toContain("paused");
    await shot(page, "cron");

    // Memory: an entry added through the same guard as the memory tool; a secret is refused.
    await page.goto(`${base}/dashboard/knowledge`);
    await page.type("#add-user", "Prefers short answers");
    await press(page, "Add to USER.md");
    expect(await page.$eval(".flash", (e) => e.getAttribute("role"))).toBe("status");
    expect(await page.$eval("main", (e) => e.textContent)).toContain("Prefers short answers");
    await page.type("#add-memory", "the deploy key is sk-abcdefghijklmnopqrstuvwxyz0123456789");
    await press(page, "Add to MEMORY.md");
    expect(await page.$eval(".flash", (e) => e.getAttribute("role"))).toBe("alert");
    expect(await page.$eval("main", (e) => e.textContent)).not.toContain("sk-abcdefghij");
    await shot(page, "knowledge");

    // The log tail: pino lines of HERALD_HOME/logs/herald.log, filtered by level.
    mkdirSync(join(h.homeDir, "logs"), { recursive: true });
    const line = (level: number, msg: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ level, time: Date.now(), pid: 1, hostname: "h", msg, ...extra });
    writeFileSync(
      join(h.homeDir, "logs", "herald.log"),
      `${[line(30, "gateway ready", { adapters: ["api", "telegram"] }), line(50, "adapter failed to start", { platform: "slack" }), line(30, "http server listening")].join("\n")}\n`,
    );
    await page.goto(`${base}/dashboard/logs`);
    expect(await page.$$eval("#log-table tbody tr", (rows) => rows.length)).toBe(3);
    await shot(page, "logs");
    await page.select("#level", "50");
    await Promise.all([page.waitForNavigation(), page.click("::-p-aria(Show)")]);
    const errorsOnly = await page.$eval("#log-table tbody", (e) => e.textContent ?? "");
    expect(errorsOnly).toContain("adapter failed to start");
    expect(errorsOnly).not.toContain("gateway ready");

    // Usage: the turns above by model and by user, from the usage ledger.
    await page.goto(`${base}/dashboard/usage`);
    const byModel = await page.$eval("#usage-by-model tbody", (e) => e.textContent ?? "");
    expect(byModel).toContain("fake-model");
    const byUser = await page.$eval("#usage-by-user tbody", (e) => e.textContent ?? "");
    expect(byUser).toContain("telegram:999");
    expect(byUser).toContain("api:");
    await shot(page, "usage");

    await page.goto(`${base}/dashboard/`);
    await shot(page, "overview");
    expect(await page.$eval("#turns-last-hour", (e) => Number(e.textContent))).toBeGreaterThanOrEqual(3);
    await page.setViewport({ width: 390, height: 760, isMobile: true });
    await page.goto(`${base}/dashboard/sessions`);
    await shot(page, "phone");

    await press(page, "Log out");
    expect(page.url()).toBe(`${base}/dashboard/login`);
    await page.goto(`${base}/dashboard/sessions`);
    expect(page.url()).toBe(`${base}/dashboard/login`);
    await page.close();
  });
});
