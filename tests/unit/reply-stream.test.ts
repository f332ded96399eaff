/**
 * Streamed previews: half-written Markdown closed so every step renders (checked with the fake Bot
 * API's strict Telegram HTML parser), the preview cadence against a send budget, the durable record of
 * preview ids, and the `stream` config key's error.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { closeOpenMarkdown, type PreviewPlatform, ReplyStreams } from "../../adapters/shared/reply-stream.js";
import { formatChunks } from "../../adapters/telegram/format.js";
import { loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";
import { silentLogger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { parseTelegramHtml } from "../fakes/telegram/html.js";

const CHAT: ChatRef = { platform: "telegram", chatId: "111" };

describe("closeOpenMarkdown", () => {
  it("closes an open code fence, inline code, bold and strikethrough; leaves finished text alone", () => {
    expect(closeOpenMarkdown("Look:\n\n```ts\nconst a = 1;")).toBe("Look:\n\n```ts\nconst a = 1;\n```");
    expect(closeOpenMarkdown("~~~\ncode\n")).toBe("~~~\ncode\n~~~");
    expect(closeOpenMarkdown("run `npm te")).toBe("run `npm te`");
    expect(closeOpenMarkdown("this is **very imp")).toBe("this is **very imp**");
    expect(closeOpenMarkdown("**bold** and `a ** b` and ~~gone")).toBe("**bold** and `a ** b` and ~~gone~~");
    expect(closeOpenMarkdown("**bold `code")).toBe("**bold `code`**");
    const done = "Done: **bold**, `code`, ~~no~~.\n\n```\nx\n```";
    expect(closeOpenMarkdown(done)).toBe(done);
  });

  it("every prefix of a reply renders as Telegram HTML the Bot API accepts, code shown as code", () => {
    const reply = [
      "Here is **the fix** for `parse()` & <friends>:",
      "",
      "1. Open _the file_",
      "2. Replace ~~old~~ with [the docs](https://example.org/a?b=1&c=2)",
      "",
      "```ts",
      "if (a < b && c > d) {",
      '  console.log("<b>not bold</b>");',
      "}",
      "```",
      "",
      "> quoted **text**",
      "",
      "| a | b |",
      "|---|---|",
      "| 1 | 2 |",
    ].join("\n");
    for (let end = 1; end <= reply.length; end++) {
      const prefix = reply.slice(0, end).trimEnd();
      if (!prefix) continue;
      for (const chunk of formatChunks(closeOpenMarkdown(prefix))) {
        const parsed = parseTelegramHtml(chunk.html);
        expect(parsed.ok, `prefix ${end}: ${chunk.html}`).toBe(true);
        expect(chunk.html).not.toContain("```");
      }
    }
  });
});

/** A platform whose calls are recorded and whose budget the test sets. */
function recordingPlatform() {
  const calls: { call: string; id: string; text: string }[] = [];
  let next = 1;
  let inflight = 0;
  let maxInflight = 0;
  const budget = { waitMs: 0 };
  const platform: PreviewPlatform<string> = {
    chunks: (markdown) => (markdown.length <= 20 ? [markdown] : [markdown.slice(0, 20), markdown.slice(20)]),
    post: async (_chat, chunk) => {
      inflight++;
      maxInflight = Math.max(maxInflight, inflight);
      await new Promise((r) => setTimeout(r, 30));
      inflight--;
      const id = String(next++);
      calls.push({ call: "post", id, text: chunk });
      return id;
    },
    edit: async (_chat, id, chunk) => {
      inflight++;
      maxInflight = Math.max(maxInflight, inflight);
      await new Promise((r) => setTimeout(r, 30));
      inflight--;
      calls.push({ call: "edit", id, text: chunk });
    },
    remove: async (_chat, id) => {
      calls.push({ call: "remove", id, text: "" });
    },
    waitMs: () => budget.waitMs,
    intervalMs: () => 100,
  };
  return { platform, calls, budget, maxInflight: () => maxInflight };
}

function memoryKv(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    get: (k) => data.get(k),
    set: (k, v) => void data.set(k, v),
    delete: (k) => void data.delete(k),
  };
}

const delta = (text: string) => ({ type: "delta" as const, replyToId: "111:7", text });

describe("ReplyStreams", () => {
  afterEach(() => vi.useRealTimers());

  it("posts once, then edits one call at a time; skips while the budget has no slot; claim stops it", async () => {
    vi.useFakeTimers();
    const { platform, calls, budget, maxInflight } = recordingPlatform();
    const kv = memoryKv();
    const streams = new ReplyStreams({
      platform,
      kv,
      logger: silentLogger(),
      nativeId: (id) => id.split(":")[1]!,
    });
    streams.onEvent(CHAT, delta("Hello"));
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toEqual([{ call: "post", id: "1", text: "Hello" }]);
    expect(JSON.parse(kv.data.get("stream:111||7")!)).toEqual(["1"]);
    for (const word of [" there", ",", " friend"]) {
      streams.onEvent(CHAT, delta(word));
      await vi.advanceTimersByTimeAsync(10);
    }
    await vi.advanceTimersByTimeAsync(500);
    expect(calls.at(-1)).toEqual({ call: "edit", id: "1", text: "Hello there, friend" });
    expect(maxInflight()).toBe(1);
    // No slot in the budget: nothing goes, however much text arrives.
    budget.waitMs = 1000;
    const before = calls.length;
    streams.onEvent(CHAT, delta(" and more"));
    await vi.advanceTimersByTimeAsync(900);
    expect(calls.length).toBe(before);
    // Past the platform's length the preview continues in a new message.
    budget.waitMs = 0;
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls.filter((c) => c.call === "post").map((c) => c.text)).toEqual(["Hello", "and more"]);
    const claimed = await streams.claim(CHAT, "7");
    expect(claimed.map((p) => p.id)).toEqual(["1", "2"]);
    streams.onEvent(CHAT, delta(" late"));
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls.at(-1)!.text).toBe("and more");
    await streams.settle(CHAT, "7", claimed, 1);
    expect(calls.at(-1)).toEqual({ call: "remove", id: "2", text: "" });
    expect(kv.data.size).toBe(0);
  });

  it("a restarted process edits the recorded preview instead of posting another; [SILENT] is never shown", async () => {
    vi.useFakeTimers();
    const { platform, calls } = recordingPlatform();
    const kv = memoryKv();
    kv.set("stream:111||7", JSON.stringify(["41"]));
    const streams = new ReplyStreams({
      platform,
      kv,
      logger: silentLogger(),
      nativeId: (id) => id.split(":")[1]!,
    });
    streams.onEvent(CHAT, delta("Again"));
    await vi.advanceTimersByTimeAsync(300);
    expect(calls).toEqual([{ call: "edit", id: "41", text: "Again" }]);
    streams.onEvent(CHAT, { type: "delta", replyToId: "111:8", text: "[SIL" });
    await vi.advanceTimersByTimeAsync(300);
    expect(calls).toHaveLength(1);
    // A cancelled turn's preview is deleted.
    streams.onEvent(CHAT, { type: "ended", replyToId: "111:7", status: "cancelled" });
    await vi.advanceTimersByTimeAsync(10);
    expect(calls.at(-1)).toEqual({ call: "remove", id: "41", text: "" });
  });
});

describe("ReplyStreams after a restart with streaming off", () => {
  it("the final send still finds the recorded preview and replaces it; then the record is gone", async () => {
    const { platform, calls } = recordingPlatform();
    const kv = memoryKv();
    kv.set("stream:111||7", JSON.stringify(["41", "42"]));
    const streams = new ReplyStreams({ platform, kv, logger: silentLogger(), nativeId: (id) => id });
    const previews = await streams.claim(CHAT, "7");
    expect(previews).toEqual([{ id: "41" }, { id: "42" }]);
    await streams.settle(CHAT, "7", previews, 1);
    expect(calls).toEqual([{ call: "remove", id: "42", text: "" }]);
    expect(kv.data.size).toBe(0);
    expect(await streams.claim(CHAT, "7")).toEqual([]);
  });
});

describe("the stream config key", () => {
  let home: string | undefined;
  afterEach(() => {
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("defaults to edit, takes off, and names the key and the values on anything else", () => {
    home = mkdtempSync(join(tmpdir(), "herald-stream-config-"));
    const env = { HERALD_HOME: home, TELEGRAM_BOT_TOKEN: "1:x" };
    expect((loadConfig({ env }).platforms["telegram"] as { stream?: string }).stream).toBe("edit");
    const off = loadConfig({ env: { ...env, SLACK_STREAM: "off" } });
    expect((off.platforms["slack"] as { stream?: string }).stream).toBe("off");
    let error: unknown;
    try {
      loadConfig({ env: { ...env, TELEGRAM_STREAM: "sometimes" } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/TELEGRAM_STREAM \(config\.yaml: telegram\.stream\) is invalid/);
    expect((error as Error).message).toMatch(/'edit'.*'off'/);
  });
});
