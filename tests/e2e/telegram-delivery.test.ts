/**
 * No loss, no duplicates: an update is confirmed to Telegram only after the gateway recorded it; repeats
 * are processed once; a crash at any point yields exactly one reply. The gateway's part (its inbound
 * ledger, replying once per recorded message) is played by `miniGateway`, which follows the contract in
 * core/types.ts: record durably, then resolve; reply later.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TelegramAdapter } from "../../adapters/telegram/index.js";
import type { InboundMessage, InboundOutcome } from "../../core/types.js";
import { type TelegramRig, telegramRig } from "./telegram-helpers.js";

let rig: TelegramRig;
afterEach(async () => {
  await rig?.close();
});

/** The gateway's inbound ledger and turn runner, reduced to what these tests need. */
function miniGateway() {
  const ledger = new Map<string, { message: InboundMessage; replied: boolean }>();
  const calls: string[] = [];
  return {
    ledger,
    calls,
    /** The InboundHandler: records (dedupes), then the turn answers after the handler resolved. */
    handler(adapter: TelegramAdapter, options: { replyNow?: boolean } = {}) {
      return async (message: InboundMessage): Promise<InboundOutcome> => {
        calls.push(message.messageId);
        if (ledger.has(message.messageId)) return "duplicate";
        ledger.set(message.messageId, { message, replied: false });
        if (options.replyNow !== false) setImmediate(() => void this.reply(adapter, message.messageId));
        return "accepted";
      };
    },
    /** After a restart: run the turns that were recorded but not answered. */
    async replayUnanswered(adapter: TelegramAdapter) {
      for (const [id, entry] of ledger) if (!entry.replied) await this.reply(adapter, id);
    },
    async reply(adapter: TelegramAdapter, messageId: string) {
      const entry = ledger.get(messageId)!;
      await adapter.send(entry.message.chat, {
        text: `answer to ${entry.message.text}`,
        idempotencyKey: messageId,
      });
      entry.replied = true;
    },
  };
}

describe("telegram: no loss, no duplicates", () => {
  it("does not confirm an update's offset before the gateway recorded it", async () => {
    rig = await telegramRig();
    let release!: () => void;
    const recorded = new Promise<void>((resolve) => {
      release = resolve;
    });
    await rig.start(async () => {
      await recorded;
      return "accepted";
    });
    const first = rig.fake.pushUpdate({ message: rig.fake.userMessage({ chatId: 111, text: "one" }) });
    await rig.waitForReceived(1);
    // The handler has the update but has not resolved: Telegram must still hold it.
    rig.fake.userSends({ chatId: 222, fromId: 222, text: "two" });
    await new Promise((r) => setTimeout(r, 100));
    expect(rig.fake.confirmedOffset()).toBeLessThanOrEqual(first);
    expect(rig.received).toHaveLength(1);
    release();
    await rig.waitForReceived(2);
    await rig.fake.waitFor(() => rig.fake.confirmedOffset() > first);
  });

  it("crash after recording, before replying: exactly one reply", async () => {
    rig = await telegramRig();
    const gw = miniGateway();
    // No getUpdates carrying an offset gets through: the process dies before it could confirm one.
    rig.fake.fault("getUpdates", {
      status: 502,
      rawBody: "<html>502</html>",
      times: 1000,
      when: (p) => p["offset"] !== undefined,
    });
    await rig.adapter.start(gw.handler(rig.adapter, { replyNow: false }));
    rig.fake.userSends({ chatId: 111, text: "are you there?" });
    await rig.fake.waitFor(() => gw.ledger.size === 1);
    await rig.adapter.stop();
    expect(rig.fake.pendingUpdates()).toBe(1);
    rig.fake.clearFaults();

    const restarted = rig.newAdapter();
    await restarted.start(gw.handler(restarted));
    await gw.replayUnanswered(restarted);
    await rig.fake.waitFor(() => gw.calls.length === 2 && rig.fake.pendingUpdates() === 0);
    // Telegram delivered it again with the same message id; the ledger knew it.
    expect(gw.calls).toEqual(["111:1", "111:1"]);
    expect(rig.fake.botMessages(111).map((m) => m.text)).toEqual(["answer to are you there?"]);
  });

  it("crash before recording: the update comes again and is answered once", async () => {
    rig = await telegramRig({ stopGraceMs: 50 });
    const gw = miniGateway();
    // The first process takes the update but dies while recording it.
    await rig.adapter.start(() => new Promise<InboundOutcome>(() => undefined));
    rig.fake.userSends({ chatId: 111, text: "hello?" });
    await rig.fake.waitFor(
      () => rig.fake.callsTo("getUpdates").some((c) => c.status === 200) && rig.fake.pendingUpdates() === 1,
    );
    await rig.adapter.stop();
    expect(rig.fake.pendingUpdates()).toBe(1);

    const restarted = rig.newAdapter();
    await restarted.start(gw.handler(restarted));
    await rig.fake.waitFor(() => rig.fake.botMessages(111).length === 1);
    await rig.fake.waitFor(() => rig.fake.pendingUpdates() === 0);
    expect(gw.calls).toEqual(["111:1"]);
    expect(rig.fake.botMessages(111).map((m) => m.text)).toEqual(["answer to hello?"]);
  });

  it("processes a repeated update_id once, and gives a repeated message the same id", async () => {
    rig = await telegramRig();
    await rig.start();
    const message = rig.fake.userMessage({ chatId: 111, text: "once" });
    rig.fake.pushUpdate({ update_id: 900, message });
    rig.fake.pushUpdate({ update_id: 900, message });
    await rig.waitForReceived(1);
    await rig.fake.waitFor(() => rig.fake.confirmedOffset() === 901);
    // Delivered again after it was confirmed (a misbehaving proxy): still once.
    rig.fake.pushUpdate({ update_id: 900, message });
    // The same message inside a new update (Telegram's redelivery): same message id for the ledger.
    rig.fake.pushUpdate({ update_id: 901, message });
    await rig.waitForReceived(2);
    await rig.fake.waitFor(() => rig.fake.confirmedOffset() === 902);
    expect(rig.received.map((m) => m.messageId)).toEqual(["111:1", "111:1"]);
  });

  it("leaves an update unconfirmed when recording fails, fetches it again, and keeps the chat's order", async () => {
    rig = await telegramRig();
    let failures = 0;
    const recorded: string[] = [];
    await rig.start(async (m) => {
      if (m.text === "first" && failures < 2) {
        failures += 1;
        throw new Error("database is locked");
      }
      recorded.push(m.text);
      return "accepted";
    });
    rig.fake.userSends({ chatId: 111, text: "first" });
    rig.fake.userSends({ chatId: 111, text: "second" });
    rig.fake.userSends({ chatId: 222, fromId: 222, text: "other chat" });
    await rig.fake.waitFor(() => recorded.length === 3);
    expect(failures).toBe(2);
    expect(recorded.filter((t) => t !== "other chat")).toEqual(["first", "second"]);
    expect(recorded.filter((t) => t === "other chat")).toHaveLength(1);
    expect(rig.logs.some((l) => l.msg === "telegram update not recorded, will fetch again")).toBe(true);
  });

  it("while nothing can be recorded (database down) drops nothing, however many attempts it takes", async () => {
    rig = await telegramRig();
    let down = true;
    let attempts = 0;
    const recorded: string[] = [];
    await rig.start(async (m) => {
      if (down) {
        attempts += 1;
        throw new Error("SQLITE_FULL: database or disk is full");
      }
      recorded.push(m.text);
      return "accepted";
    });
    rig.fake.userSends({ chatId: 111, text: "a" });
    rig.fake.userSends({ chatId: 222, fromId: 222, text: "b" });
    rig.fake.userSends({ chatId: 111, text: "c" });
    await rig.fake.waitFor(() => attempts >= 16);
    down = false;
    await rig.fake.waitFor(() => recorded.length === 3);
    expect(recorded.filter((t) => t !== "b")).toEqual(["a", "c"]);
    expect(rig.logs.some((l) => l.msg === "telegram update could not be recorded, skipped")).toBe(false);
  });

  it("skips an update the gateway can never record once others are recorded around it", async () => {
    rig = await telegramRig();
    await rig.start(async (m) => {
      if (m.text === "poison") throw new Error("CHECK constraint failed");
      return "accepted";
    });
    rig.fake.userSends({ chatId: 111, text: "poison" });
    rig.fake.userSends({ chatId: 111, text: "after poison" });
    // Other chats keep being recorded meanwhile.
    for (let i = 0; !rig.received.some((m) => m.text === "after poison"); i++) {
      expect(i).toBeLessThan(20);
      rig.fake.userSends({ chatId: 222, fromId: 222, text: `other ${i}` });
      await rig.fake.waitFor(() => rig.received.some((m) => m.text === `other ${i}`));
      await new Promise((r) => setTimeout(r, 60));
    }
    expect(rig.received.filter((m) => m.text === "poison").length).toBeGreaterThanOrEqual(5);
    expect(rig.logs.find((l) => l.msg === "telegram update could not be recorded, skipped")).toMatchObject({
      attempts: 5,
    });
  });

  it("logs and skips a malformed update, and goes on", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.pushRaw({ update_id: 700, message: { message_id: "x", chat: "nope", date: 1 } });
    rig.fake.pushRaw({ no_update_id: true });
    rig.fake.userSends({ chatId: 111, text: "still here" });
    await rig.waitForReceived(1);
    expect(rig.received.map((m) => m.text)).toEqual(["still here"]);
    const warn = rig.logs.find((l) => l.msg === "telegram malformed update skipped");
    expect(warn).toMatchObject({ updateId: 700 });
    expect(rig.logs.some((l) => l.msg === "telegram malformed update skipped (no update_id)")).toBe(true);
    await rig.fake.waitFor(() => rig.fake.pendingUpdates() === 0);
  });
});
