import { describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore, OutboundMessage, PlatformAdapter } from "../../core/types.js";
import { ButtonPrompts } from "../../gateway/button-prompts.js";
import type { OutboxItem } from "../../sessions/types.js";

const chat: ChatRef = { platform: "telegram", chatId: "111" };

function setup() {
  const values = new Map<string, string>();
  const kv: KeyValueStore = {
    get: (k) => values.get(k),
    set: (k, v) => void values.set(k, v),
    delete: (k) => void values.delete(k),
  };
  const edits: { messageId: string; text: string }[] = [];
  const adapter = {
    platform: "telegram",
    settleButtons: async (_chat: ChatRef, messageId: string, text: string) => {
      edits.push({ messageId, text });
    },
  } as unknown as PlatformAdapter;
  let now = 1_000_000;
  const prompts = new ButtonPrompts(kv, new Map([["telegram", adapter]]), silentLogger(), () => now);
  const item = (text: string, data: string[]): OutboxItem => ({
    id: text,
    chat,
    message: { text, kind: "reply", buttons: [data.map((d) => ({ label: d, data: d }))] } as OutboundMessage,
    chunksSent: 0,
    attempts: 0,
    nextAttemptAt: 0,
    createdAt: 0,
  });
  return { prompts, edits, item, advance: (ms: number) => (now += ms), values };
}

describe("ButtonPrompts", () => {
  it("settles a delivered prompt by any of its buttons' data, once, on its last chunk", () => {
    const { prompts, edits, item } = setup();
    prompts.record(item("Run it?", ["/approve a1", "/deny a1"]), ["10", "11"]);
    prompts.settle(chat, "/deny a1", "✗ Denied");
    prompts.settle(chat, "/approve a1", "✓ Approved");
    expect(edits).toEqual([{ messageId: "11", text: "Run it?\n\n✗ Denied" }]);
  });

  it("a click forgets the prompt without editing it (the adapter marked it)", () => {
    const { prompts, edits, item } = setup();
    prompts.record(item("Run it?", ["/deny a1"]), ["10"]);
    prompts.settle(chat, "/deny a1", "✗ Denied", { edit: false });
    prompts.settle(chat, "/deny a1", "✗ Denied");
    expect(edits).toEqual([]);
  });

  it("an answer before the prompt's delivery was recorded settles it when it is, within 10 minutes", () => {
    const { prompts, edits, item, advance } = setup();
    prompts.settle(chat, "/deny a1", "✗ Denied");
    prompts.record(item("Run it?", ["/deny a1"]), ["10"]);
    expect(edits).toEqual([{ messageId: "10", text: "Run it?\n\n✗ Denied" }]);
    prompts.settle(chat, "/deny b2", "✗ Denied");
    advance(11 * 60_000);
    prompts.record(item("Other?", ["/deny b2"]), ["12"]);
    expect(edits).toHaveLength(1);
  });

  it("asking again after a restart settles only the old prompt, not the new one with the same buttons", () => {
    const { prompts, edits, item } = setup();
    prompts.record(item("Run it?", ["/deny a1"]), ["10"]);
    prompts.settle(chat, "/deny a1", "↓ Asked again below.", { early: false });
    prompts.settle(chat, "/deny a1", "↓ Asked again below.", { early: false });
    prompts.record(item("(Still waiting) Run it?", ["/deny a1"]), ["20"]);
    expect(edits).toEqual([{ messageId: "10", text: "Run it?\n\n↓ Asked again below." }]);
    prompts.settle(chat, "/deny a1", "✓ Approved");
    expect(edits.at(-1)).toEqual({ messageId: "20", text: "(Still waiting) Run it?\n\n✓ Approved" });
  });

  it("keeps at most 20 prompts per chat, and nothing for a platform that cannot take buttons away", () => {
    const { prompts, edits, item, values } = setup();
    for (let i = 0; i < 25; i++) prompts.record(item(`Q${i}`, [`/deny ${i}`]), [String(i)]);
    prompts.settle(chat, "/deny 0", "gone");
    prompts.settle(chat, "/deny 24", "kept");
    expect(edits).toEqual([{ messageId: "24", text: "Q24\n\nkept" }]);
    prompts.settle({ platform: "whatsapp", chatId: "1" }, "/deny x", "n/a");
    expect([...values.keys()]).toEqual(["telegram:111"]);
  });
});
