/** Buttons on the platforms: data within a callback field's limit (stored by id beyond it), Telegram clicks, Discord rows. */
import { describe, expect, it } from "vitest";
import { actionRows } from "../../adapters/discord/buttons.js";
import { decodeButtonData, encodeButtonData } from "../../adapters/shared/button-data.js";
import { clickToInbound, inlineKeyboard } from "../../adapters/telegram/buttons.js";
import type { KeyValueStore } from "../../core/types.js";

function kv(): KeyValueStore & { size(): number } {
  const map = new Map<string, string>();
  return {
    get: (k) => map.get(k),
    set: (k, v) => void map.set(k, v),
    delete: (k) => void map.delete(k),
    size: () => map.size,
  };
}

describe("button data", () => {
  it("fits: travels as itself, nothing stored", () => {
    const store = kv();
    expect(encodeButtonData("/approve 3f2a1b2c", store, 64)).toBe("/approve 3f2a1b2c");
    expect(store.size()).toBe(0);
  });

  it("too long (in bytes, not characters): an id within the limit that resolves to the data", () => {
    const store = kv();
    const data = "é".repeat(40); // 40 characters, 80 bytes
    const encoded = encodeButtonData(data, store, 64);
    expect(Buffer.byteLength(encoded)).toBeLessThanOrEqual(64);
    expect(decodeButtonData(encoded, store)).toBe(data);
    // The same data gets the same id (one entry, however often it is sent).
    expect(encodeButtonData(data, store, 64)).toBe(encoded);
    expect(store.size()).toBe(1);
  });

  it("an id this store does not know resolves to nothing; data that looks like an id is stored too", () => {
    const store = kv();
    expect(decodeButtonData("#b:unknown", store)).toBeUndefined();
    const tricky = "#b:not-an-id";
    expect(decodeButtonData(encodeButtonData(tricky, store, 64), store)).toBe(tricky);
  });
});

describe("telegram clicks", () => {
  const message = (keyboard: unknown, extra: Record<string, unknown> = {}) => ({
    message_id: 7,
    date: 1_700_000_000,
    chat: { id: -100, type: "supergroup" as const },
    from: { id: 1, is_bot: true, first_name: "Herald" },
    text: "Which route?",
    reply_markup: keyboard,
    ...extra,
  });

  it("a click is the clicker's message with the button's data, in the prompt's chat", () => {
    const store = kv();
    const keyboard = inlineKeyboard([[{ label: "Fast", data: "Fast" }]], store);
    const click = clickToInbound(
      { id: "cb1", from: { id: 222, first_name: "Bo" }, message: message(keyboard), data: "Fast" },
      store,
    );
    expect(click?.inbound).toMatchObject({
      messageId: "-100:cb:cb1",
      chat: { platform: "telegram", chatId: "-100" },
      chatType: "group",
      sender: { id: "222", name: "Bo" },
      text: "Fast",
      mentioned: true,
    });
    expect(click?.label).toBe("Fast");
  });

  it("in a group only the person the prompt answers settles it", () => {
    const store = kv();
    const asked = { reply_to_message: { message_id: 3, from: { id: 111, first_name: "Al" } } };
    const query = (from: number) => ({
      id: `cb${from}`,
      from: { id: from, first_name: "X" },
      message: message(undefined, asked),
      data: "/deny 0a1b2c3d",
    });
    expect(clickToInbound(query(222), store)?.settles).toBe(false);
    expect(clickToInbound(query(111), store)?.settles).toBe(true);
  });

  it("nothing to act on: no data, a message too old to show, or data no longer known", () => {
    const store = kv();
    const from = { id: 1, first_name: "A" };
    expect(clickToInbound({ id: "a", from, message: message(undefined) }, store)).toBeUndefined();
    expect(
      clickToInbound({ id: "b", from, message: { ...message(undefined), date: 0 }, data: "x" }, store),
    ).toBeUndefined();
    expect(
      clickToInbound({ id: "c", from, message: message(undefined), data: "#b:gone" }, store),
    ).toBeUndefined();
  });
});

describe("discord action rows", () => {
  it("ten one-button rows (a question's choices) are packed five to a row; duplicates are dropped", () => {
    const choices = Array.from({ length: 10 }, (_, i) => [{ label: `Choice ${i + 1}`, data: `c${i + 1}` }]);
    const rows = actionRows([...choices, [{ label: "Again", data: "c1" }]], kv()) as {
      components: { label: string; custom_id: string }[];
    }[];
    expect(rows.map((r) => r.components.map((b) => b.label))).toEqual([
      ["Choice 1", "Choice 2", "Choice 3", "Choice 4", "Choice 5"],
      ["Choice 6", "Choice 7", "Choice 8", "Choice 9", "Choice 10"],
    ]);
  });

  it("rows that fit stay as they are", () => {
    const rows = actionRows(
      [
        [
          { label: "Yes", data: "/approve 0a1b2c3d" },
          { label: "No", data: "/deny 0a1b2c3d" },
        ],
      ],
      kv(),
    );
    expect(rows).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 2, label: "Yes", custom_id: "/approve 0a1b2c3d" },
          { type: 2, style: 2, label: "No", custom_id: "/deny 0a1b2c3d" },
        ],
      },
    ]);
  });
});
