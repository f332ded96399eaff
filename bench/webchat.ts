/**
 * The web chat in a real headless Chromium against the gateway (in this process, the scripted fake
 * model answering at once in 10 pieces 20 ms apart):
 * - time to the first token: for one turn sent from the page, when the first text of the reply is
 *   visible in the page (painted: the frame after the DOM change) and when the chat's event stream
 *   delivers its first delta to a plain client on the same chat; beside it, the first content chunk of
 *   a streamed `/v1/chat/completions` request for the same reply (its own turn);
 * - page weight: the JS and CSS the page loads, raw and gzipped, and the HTML;
 * - a session of 1,000 messages (500 turns) opened: from navigation to the newest page of its history
 *   shown, in the browser, and the history API's own answer time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createParser } from "eventsource-parser";
import puppeteer from "puppeteer-core";
import { pageWeight } from "../adapters/webchat/assets.js";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { sessionKey } from "../core/chat.js";
import { silentLogger } from "../core/logger.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, median, round } from "./lib.js";

export interface WebchatBenchOptions {
  turns: number;
  opens: number;
  sessionMessages: number;
}

export interface WebchatBenchResult {
  browserFirstTokenMs: number[];
  streamFirstDeltaMs: number[];
  apiFirstChunkMs: number[];
  weight: { jsCssRaw: number; jsCssGzip: number; htmlGzip: number; highlightGzip: number };
  openMs: number[];
  historyApiMs: number[];
  /** The host's 1-minute load average at the end (the machine is shared). */
  loadAverage: number;
}

const PASSWORD = "bench-webchat-password";
const REPLY = "The quick brown fox jumps over the lazy dog, again and again, in ten pieces.";

/** Runs the scenario. */
export async function benchWebchat(opts: WebchatBenchOptions): Promise<WebchatBenchResult> {
  const home = mkdtempSync(join(tmpdir(), "herald-bench-webchat-"));
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: REPLY, pieces: 10, chunkDelayMs: 20 }));
  const config = loadConfig({
    env: {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      API_SERVER_PORT: "0",
      HERALD_LOG_LEVEL: "silent",
      WEBCHAT_ENABLED: "true",
      DASHBOARD_PASSWORD: PASSWORD,
    },
  });
  const gateway = await startGateway(config, { logger: silentLogger() });
  const base = gateway.http!.url;
  const browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 800 });
    await page.goto(`${base}/chat`);
    await page.type("input[name=password]", PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
    await page.waitForSelector("#input");
    const cookie = (await browser.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");

    const result: WebchatBenchResult = {
      browserFirstTokenMs: [],
      streamFirstDeltaMs: [],
      apiFirstChunkMs: [],
      weight: weightOf(await (await fetch(`${base}/chat`, { headers: { cookie } })).text()),
      openMs: [],
      historyApiMs: [],
      loadAverage: 0,
    };
    for (let i = 0; i < opts.turns + 2; i++) {
      const [browserMs, streamMs] = await oneTurn(page, base, cookie, i);
      const apiMs = await apiFirstChunk(base);
      if (i < 2) continue; // warm-up
      result.browserFirstTokenMs.push(browserMs);
      result.streamFirstDeltaMs.push(streamMs);
      result.apiFirstChunkMs.push(apiMs);
    }
    seedSession(gateway, opts.sessionMessages);
    for (let i = 0; i < opts.opens + 2; i++) {
      await page.goto(`${base}/chat`);
      const ms = await page.evaluate(async () => {
        const start = performance.timeOrigin;
        while (!document.querySelector("#turns .turn:last-child .msg.bot"))
          await new Promise((r) => setTimeout(r, 2));
        await new Promise((r) => requestAnimationFrame(() => r(undefined)));
        return performance.timeOrigin + performance.now() - start;
      });
      const t0 = performance.now();
      await fetch(`${base}/chat/api/history`, { headers: { cookie } }).then((r) => r.json());
      if (i < 2) continue;
      result.openMs.push(ms);
      result.historyApiMs.push(performance.now() - t0);
    }
    result.loadAverage = loadavg()[0] ?? 0;
    return result;
  } finally {
    await browser.close();
    await gateway.stop();
    await llm.close();
    rmSync(home, { recursive: true, force: true });
  }
}

function weightOf(html: string): WebchatBenchResult["weight"] {
  const w = pageWeight();
  return {
    jsCssRaw: w.raw,
    jsCssGzip: w.gzip,
    htmlGzip: gzipSync(html).length,
    highlightGzip: w.onDemandGzip,
  };
}

/**
 * One turn typed on the page: ms from the send to the first reply text painted in the page, and to
 * the first delta on the chat's event stream read by a plain client (both on this machine's clock).
 */
async function oneTurn(
  page: import("puppeteer-core").Page,
  base: string,
  cookie: string,
  i: number,
): Promise<[number, number]> {
  const history = (await (await fetch(`${base}/chat/api/history`, { headers: { cookie } })).json()) as {
    cursor: string;
  };
  const abort = new AbortController();
  const res = await fetch(`${base}/chat/events?after=${history.cursor}`, {
    headers: { cookie },
    signal: abort.signal,
  });
  let firstDelta = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const parser = createParser({
    onEvent: (e) => {
      if (e.event === "delta" && !firstDelta) firstDelta = performance.timeOrigin + performance.now();
      if (e.event === "message") done();
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // aborted
    }
  })();
  const count = await page.$$eval(".msg.bot", (els) => els.length);
  const { sentAt, paintedAt } = await page.evaluate(
    async (n, text) => {
      const input = document.getElementById("input") as HTMLTextAreaElement;
      input.value = text;
      const seen = new Promise<number>((resolve) => {
        const observer = new MutationObserver(() => {
          const streaming = document.querySelectorAll(".msg.bot")[n];
          if (streaming?.textContent?.trim()) {
            observer.disconnect();
            requestAnimationFrame(() => resolve(performance.timeOrigin + performance.now()));
          }
        });
        observer.observe(document.getElementById("turns")!, {
          childList: true,
          subtree: true,
          characterData: true,
        });
      });
      const start = performance.timeOrigin + performance.now();
      (document.getElementById("composer") as HTMLFormElement).requestSubmit();
      return { sentAt: start, paintedAt: await seen };
    },
    count,
    `turn ${i}`,
  );
  await finished;
  abort.abort();
  await page.waitForFunction(
    (n) => document.querySelectorAll(".msg.bot:not(.streaming)").length > n,
    {},
    count,
  );
  return [paintedAt - sentAt, firstDelta - sentAt];
}

/** Ms from sending a streamed completion to its first content chunk. */
async function apiFirstChunk(base: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-herald-session-id": "bench-webchat-api" },
    body: JSON.stringify({ model: "herald", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  let first = 0;
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    if (!first && /"content":"[^"]/.test(decoder.decode(chunk as Uint8Array))) first = performance.now();
  }
  return first - start;
}

/** A session of `messages` messages in the owner's web chat, its newest page what the page opens. */
function seedSession(gateway: Awaited<ReturnType<typeof startGateway>>, messages: number): void {
  const chat = { platform: "webchat", chatId: "owner" };
  const key = { chat, chatType: "dm" as const, userId: "owner" };
  gateway.state.sessions.reset(sessionKey(key), "manual");
  const { session } = gateway.state.sessions.open(key, { mode: "none", idleMinutes: 1440, atHour: 4 });
  for (let i = 0; i < messages / 2; i++) {
    gateway.state.sessions.append(
      session.id,
      [
        { role: "user", content: `Question ${i}: how does **part ${i}** work?` },
        {
          role: "assistant",
          content: `Part ${i} works like this:\n\n- one\n- two\n\n\`\`\`\ncode ${i}\n\`\`\``,
        },
      ],
      { turnId: `bench-${i}` },
    );
  }
}

export function webchatMarkdown(r: WebchatBenchResult, opts: WebchatBenchOptions, command: string): string {
  const kb = (b: number) => `${round(b / 1024, 1)} KB`;
  const browser = median(r.browserFirstTokenMs);
  const stream = median(r.streamFirstDeltaMs);
  return [
    "## Web chat",
    "",
    `Command: \`${command}\` — ${machineLine()}. Headless Chromium (Debian's), the gateway in the bench process, the fake model answering at once in 10 pieces 20 ms apart; medians of ${opts.turns} turns and ${opts.opens} page opens after 2 warm-ups each.`,
    "",
    "| figure | median |",
    "|---|---|",
    `| first token visible in the browser (send → painted) | ${round(browser, 1)} ms |`,
    `| first delta on the chat's event stream, same turn (plain client) | ${round(stream, 1)} ms |`,
    `| browser ÷ stream | ${round(browser / stream, 2)} |`,
    `| first content chunk of a streamed \`/v1/chat/completions\` (own turn) | ${round(median(r.apiFirstChunkMs), 1)} ms |`,
    `| page weight: JS + CSS (app, marked) | ${kb(r.weight.jsCssRaw)} raw, **${kb(r.weight.jsCssGzip)} gzip** |`,
    `| page weight: HTML | ${kb(r.weight.htmlGzip)} gzip |`,
    `| code colours (highlight.js, 13 languages), loaded with the first fenced block | ${kb(r.weight.highlightGzip)} gzip |`,
    `| a ${opts.sessionMessages}-message session opened (navigation → newest page shown) | ${round(median(r.openMs), 1)} ms |`,
    `| its history page from the API (40 entries, server + loopback) | ${round(median(r.historyApiMs), 1)} ms |`,
    "",
    `The session opens in ${round(Math.min(...r.openMs), 1)}–${round(Math.max(...r.openMs), 1)} ms over the ${opts.opens} opens; the host's 1-minute load average was ${round(r.loadAverage, 1)} at the end (the 2 cores are shared), so the browser's figures carry that load. The plain stream client reads in the bench process, which is also the gateway's, so its figure includes waits on the gateway's event loop; the browser is a process of its own (on a loaded host it has seen the first token before that client).`,
  ].join("\n");
}
