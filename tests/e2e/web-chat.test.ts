/**
 * The web chat in a real headless Chromium (Debian's `chromium`, driven by puppeteer-core) against the
 * whole gateway with the scripted fake model: logging in, a reply streamed as it is written, tool
 * progress and an approval button that runs the command, a PDF's text answered, a reload in the middle
 * of a reply that shows the whole reply once, two tabs of one chat. Screenshots of the main states go
 * to docs/screenshots/ when HERALD_SCREENSHOTS_DIR says so.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { type FakeSpeech, startFakeSpeech } from "../fakes/speech/index.js";
import { launchChromium } from "../helpers/chromium.js";
import { makePdf } from "../helpers/document-fixtures.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { login, openPage, replies, SHOTS, say, startWebGateway, waitForReply } from "./web-chat-helpers.js";

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

const userTexts = (page: import("puppeteer-core").Page) =>
  page.$$eval(".msg.user", (els) => els.map((e) => (e.textContent ?? "").trim()));

describe("web chat", () => {
  it("logs in with the dashboard's password and streams a reply as it is written", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const { page, errors } = await openPage(browser, base);
    await page.goto(`${base}/chat`);
    expect(await page.$("input[name=password]")).not.toBeNull();
    await page.screenshot({ path: join(SHOTS, "web-chat-login.png") });
    await login(page, base);
    h.llm.script({ text: "Hello **there**, this reply arrives in pieces.", pieces: 6, chunkDelayMs: 150 });
    await say(page, "hi");
    // Part of the reply shows while the model is still writing.
    await page.waitForSelector(".msg.bot.streaming");
    const partial = await page.$eval(".msg.bot.streaming", (e) => e.textContent ?? "");
    expect(partial.length).toBeGreaterThan(0);
    await waitForReply(page, "arrives in pieces.");
    expect(await page.$eval(".msg.bot strong", (e) => e.textContent)).toBe("there");
    expect(await userTexts(page)).toEqual(["hi"]);
    expect(await replies(page)).toEqual(["Hello there, this reply arrives in pieces."]);
    // The session list shows the conversation under its first message.
    await page.waitForFunction(
      () => document.querySelector(".session[aria-current] .name")?.textContent === "hi",
    );
    h.llm.script({
      text: [
        "Three ways to **ship it**:",
        "",
        "| way | time | risk |",
        "|---|---|---|",
        "| canary | 1 h | low |",
        "| blue-green | 10 min | medium |",
        "",
        "```sh\nnpm run build && npm test\n```",
        "",
        "See [the guide](https://example.com/guide).",
      ].join("\n"),
    });
    await say(page, "how do I roll out the release?");
    await waitForReply(page, "See the guide");
    expect(await page.$$eval(".msg.bot table tr", (rows) => rows.length)).toBe(3);
    // The fenced block is coloured once highlight.js has loaded (only now: the first block with a language).
    await page.waitForSelector(".msg.bot pre code.hljs span[class^='hljs-']");
    expect(await page.$eval(".msg.bot pre code", (e) => e.textContent)).toBe("npm run build && npm test\n");
    const rel = await page.$eval(".msg.bot a[href^='https://example.com']", (a) => a.getAttribute("rel"));
    expect(rel).toContain("noopener");
    await page.screenshot({ path: join(SHOTS, "web-chat-reply.png") });
    expect(errors).toEqual([]);
  });

  it("shows tool progress and an approval whose button runs the command once", async () => {
    h = await startWebGateway();
    const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";
    h.llm.setDefault((request: FakeLlmRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
    });
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    await say(page, "tidy the attributes");
    await page.waitForSelector(".tools .tool");
    expect(await page.$eval(".tools", (e) => e.textContent ?? "")).toContain("chattr");
    const approve = await page.waitForSelector("::-p-aria(✅ Approve)");
    expect(await page.$eval("[data-prompt] .bubble", (e) => e.textContent ?? "")).toContain(
      "needs your approval",
    );
    await page.screenshot({ path: join(SHOTS, "web-chat-approval.png") });
    await approve!.click();
    await waitForReply(page, "tool said:");
    const all = await replies(page);
    expect(all.at(-1)!.match(/approved-run/g)).toHaveLength(1);
    // The prompt was answered: its buttons are gone and it says what was chosen.
    expect(await page.$("::-p-aria(✅ Approve)")).toBeNull();
    expect(all.join("\n")).toContain("→ ✅ Approve");
    expect(await page.$$eval(".tools .tool.done", (els) => els.length)).toBeGreaterThan(0);
  });

  it("asks a clarify question with buttons; a click answers it and starts the next turn", async () => {
    h = await startWebGateway();
    h.llm.script(
      {
        toolCalls: [
          { name: "clarify", arguments: { question: "Which format?", choices: ["PDF", "Markdown"] } },
        ],
      },
      (request) => ({ text: `writing it as ${messageText(request.messages.at(-1))}` }),
    );
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    await say(page, "write the report");
    const markdown = await page.waitForSelector("::-p-aria(Markdown)");
    expect(await page.$eval("[data-prompt] .bubble", (e) => e.textContent ?? "")).toContain("Which format?");
    await markdown!.click();
    await waitForReply(page, "writing it as Markdown");
    expect(await page.$("::-p-aria(PDF)")).toBeNull();
    expect(await userTexts(page)).toEqual(["write the report", "Markdown"]);
  });

  it("uploads a PDF and answers from its text; the user's file can be downloaded again", async () => {
    h = await startWebGateway();
    h.llm.setDefault((request) => {
      const text = messageText(request.messages.at(-1));
      const found = /Invoice \d+ totals \d+ euros/.exec(text);
      return { text: found ? `The PDF says: ${found[0]}` : "no PDF text reached me" };
    });
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    const pdf = join(h.homeDir, "invoice.pdf");
    writeFileSync(pdf, makePdf([["Invoice 4711 totals 99 euros"]]));
    const input = await page.$("#file");
    await (input as import("puppeteer-core").ElementHandle<HTMLInputElement>).uploadFile(pdf);
    await page.waitForSelector(".chip");
    expect(await page.$eval(".chip", (e) => e.textContent ?? "")).toContain("invoice.pdf");
    await say(page, "what does it say?");
    await waitForReply(page, "The PDF says: Invoice 4711 totals 99 euros");
    const link = await page.$eval(".msg.user a.file", (a) => (a as HTMLAnchorElement).href);
    const body = await page.evaluate(async (url) => (await fetch(url)).status, link);
    expect(body).toBe(200);
  });

  it("a page reloaded mid-reply shows the reply so far, then the rest, once", async () => {
    h = await startWebGateway();
    const words = Array.from({ length: 24 }, (_, i) => `word${i}`);
    const full = words.join(" ");
    h.llm.script({ text: full, pieces: 24, chunkDelayMs: 120 });
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    await say(page, "write slowly");
    await page.waitForFunction(() =>
      document.querySelector(".msg.bot.streaming")?.textContent?.includes("word3"),
    );
    await page.reload();
    // After the reload the text written so far is there at once, and still being written.
    await page.waitForSelector(".msg.bot.streaming");
    const sofar = await page.$eval(".msg.bot.streaming", (e) => (e.textContent ?? "").trim());
    expect(sofar.startsWith("word0 word1 word2 word3")).toBe(true);
    expect(sofar).not.toContain("word23");
    await waitForReply(page, "word23");
    expect(await replies(page)).toEqual([full]);
    expect(await userTexts(page)).toEqual(["write slowly"]);
    // Reloaded after the end: the same, from the history.
    await page.reload();
    await waitForReply(page, "word23");
    expect(await replies(page)).toEqual([full]);
  });

  it("opens a long session at its newest page; earlier pages load on demand, each message once", async () => {
    h = await startWebGateway();
    const key = { chat: { platform: "webchat", chatId: "owner" }, chatType: "dm" as const, userId: "owner" };
    const { session } = h.state.sessions.open(key, { mode: "none", idleMinutes: 1440, atHour: 4 });
    for (let i = 0; i < 50; i++)
      h.state.sessions.append(
        session.id,
        [
          { role: "user", content: `question ${i}` },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: `c${i}`, type: "function", function: { name: "todo", arguments: "{}" } }],
          },
          { role: "tool", content: "ok", tool_call_id: `c${i}` },
          { role: "assistant", content: `answer ${i}` },
        ],
        { turnId: `t-${i}` },
      );
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    await waitForReply(page, "answer 49");
    const shown = () => userTexts(page);
    const first = await shown();
    expect(first.length).toBeLessThan(50);
    expect(first.at(-1)).toBe("question 49");
    while (!(await page.$eval("#older", (b) => (b as HTMLElement).hidden))) {
      const before = (await shown()).length;
      await page.click("#older");
      await page.waitForFunction((n) => document.querySelectorAll(".msg.user").length > n, {}, before);
    }
    expect(await shown()).toEqual(Array.from({ length: 50 }, (_, i) => `question ${i}`));
    expect(await replies(page)).toEqual(Array.from({ length: 50 }, (_, i) => `answer ${i}`));
    expect(await page.$$eval(".tools .tool", (els) => els.length)).toBe(50);
  });

  it("Shift+Enter is a new line, Enter sends, Esc stops the turn being written", async () => {
    h = await startWebGateway();
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
    h.llm.script({ text: words, pieces: 60, chunkDelayMs: 150 });
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    await page.focus("#input");
    await page.keyboard.type("first line");
    await page.keyboard.down("Shift");
    await page.keyboard.press("Enter");
    await page.keyboard.up("Shift");
    await page.keyboard.type("second line");
    await page.keyboard.press("Enter");
    await page.waitForSelector(".msg.bot.streaming");
    expect(await page.$eval(".msg.user .md", (e) => e.innerHTML)).toContain("first line<br>second line");
    await page.keyboard.press("Escape");
    await h.llm.waitForClosedEarly(1);
    await page.waitForFunction(() => !document.querySelector(".turn.running"));
    const shown = await page.$eval(".turn", (e) => e.textContent ?? "");
    expect(shown).not.toContain("w59");
    expect(await userTexts(page)).toEqual(["first linesecond line", "/stop"]);
  });

  it("starts, resumes and renames sessions from the side list", async () => {
    h = await startWebGateway();
    h.llm.setDefault((r) => ({ text: `echo: ${messageText(r.messages.at(-1))}` }));
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    await say(page, "about apples");
    await waitForReply(page, "echo: about apples");
    await page.click("#new-session");
    await page.waitForFunction(() => !document.querySelector(".msg.user"));
    await say(page, "about pears");
    await waitForReply(page, "echo: about pears");
    await page.waitForFunction(() => document.querySelectorAll("#sessions .session").length === 2);
    await page.click("#sessions ::-p-text(about apples)");
    await page.waitForFunction(() => document.querySelector(".msg.user")?.textContent?.includes("apples"));
    expect(await userTexts(page)).toEqual(["about apples"]);
    await page.waitForSelector("::-p-aria(Rename this session)");
    await page.click("::-p-aria(Rename this session)");
    const field = await page.waitForSelector("::-p-aria(Session name)");
    await field!.evaluate((e) => {
      (e as HTMLInputElement).value = "";
    });
    await field!.type("Fruit");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.getElementById("title")?.textContent === "Fruit");
    expect(h.state.sessions.list({ limit: 5 }).map((s) => s.title)).toContain("Fruit");
  });

  it("two tabs of one chat both show the conversation as it happens", async () => {
    h = await startWebGateway();
    const { page } = await openPage(browser, h.apiUrl);
    await login(page, h.apiUrl);
    const second = await page.browserContext().newPage();
    await second.goto(`${h.apiUrl}/chat`);
    await second.waitForSelector("#input");
    h.llm.script({ text: "seen in both tabs, streamed", pieces: 5, chunkDelayMs: 100 });
    await say(page, "hello from tab one");
    await second.waitForSelector(".msg.bot.streaming");
    await waitForReply(second, "seen in both tabs, streamed");
    await waitForReply(page, "seen in both tabs, streamed");
    for (const p of [page, second]) {
      expect(await userTexts(p)).toEqual(["hello from tab one"]);
      expect(await replies(p)).toEqual(["seen in both tabs, streamed"]);
    }
  });

  it("records a voice note in the browser; it is transcribed and answered, and plays back", async () => {
    let speech: FakeSpeech | undefined = await startFakeSpeech();
    speech.onTranscribe(() => "please book a table for two");
    const mic = await launchChromium([
      "--use-fake-device-for-media-stream",
      "--use-fake-ui-for-media-stream",
    ]);
    try {
      h = await startWebGateway({ HERALD_STT_URL: speech.baseUrl, HERALD_STT_MODEL: "whisper-1" });
      h.llm.setDefault((r) => ({ text: `heard: ${messageText(r.messages.at(-1))}` }));
      const { page } = await openPage(mic, h.apiUrl);
      await login(page, h.apiUrl);
      await page.click("::-p-aria(Record a voice note)");
      await page.waitForSelector("#record[aria-pressed=true]");
      await new Promise((r) => setTimeout(r, 1200));
      await page.click("#record");
      await waitForReply(page, "please book a table for two");
      expect((await replies(page)).at(-1)).toContain(
        "[voice note, transcribed:] please book a table for two",
      );
      expect(speech.transcriptions).toHaveLength(1);
      // The note is in the user's message, playable.
      const src = await page.$eval(".msg.user audio", (a) => (a as HTMLAudioElement).src);
      const type = await page.evaluate(async (u) => (await fetch(u)).headers.get("content-type"), src);
      expect(type).toMatch(/^audio\//);
    } finally {
      await mic.close();
      await speech.close();
      speech = undefined;
    }
  });
});
