import { describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.js";
import { pruneState } from "../../gateway/maintenance.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

describe("pruneState", () => {
  it("deletes old handled ledger entries, finished turns and delivered items, and keeps everything open", () => {
    const state = SqliteState.open(":memory:");
    const day = 86_400_000;
    const old = 1_000 * day;
    const chat = { platform: "fakechat", chatId: "c" };
    const message = (id: string) => ({
      platform: "fakechat",
      messageId: id,
      chat,
      chatType: "dm" as const,
      sender: { id: "u" },
      text: "hi",
      mentioned: true,
    });
    state.ledger.record(message("handled-old"), old);
    state.ledger.markHandled("fakechat", "handled-old", "accepted");
    state.ledger.record(message("unhandled-old"), old);
    const session = state.sessions.open(
      { chat, chatType: "dm", userId: "u" },
      { mode: "none", idleMinutes: 1, atHour: 4 },
      old,
    );
    const turn = (id: string) =>
      state.turns.create(
        { id, sessionId: session.session.id, sessionKey: "k", chat, userId: "u", source: "chat", input: "x" },
        old,
      );
    turn("done-old");
    state.turns.finish("done-old", "done", undefined, old);
    turn("pending-old");
    const delivered = state.outbox.add(chat, { text: "a" }, undefined, old);
    state.outbox.delivered(delivered.id);
    const waiting = state.outbox.add(chat, { text: "b" }, undefined, old);

    const removed = pruneState({ state, logger: silentLogger(), now: () => old + 30 * day });
    expect(removed).toEqual({ ledger: 1, turns: 1, outbox: 1, responses: 0 });
    expect(state.ledger.unhandled().map((m) => m.messageId)).toEqual(["unhandled-old"]);
    expect(state.turns.get("pending-old")?.status).toBe("pending");
    expect(state.turns.get("done-old")).toBeUndefined();
    expect(state.outbox.pending().map((i) => i.id)).toEqual([waiting.id]);
    // The same message, redelivered within the retention, is still a duplicate.
    state.ledger.record(message("fresh"), old + 29 * day);
    state.ledger.markHandled("fakechat", "fresh", "accepted");
    pruneState({ state, logger: silentLogger(), now: () => old + 30 * day });
    expect(state.ledger.record(message("fresh"), old + 30 * day)).toBe(false);
    state.close();
  });

  it("deletes the API's stored responses once they expire, and they are unreadable from then", () => {
    const state = SqliteState.open(":memory:");
    const put = (id: string, expiresAt: number) =>
      state.responses.put({ id, chatId: "c", userId: "api", body: "{}", createdAt: 0, expiresAt });
    put("resp_old", 1_000);
    put("resp_new", 5_000);
    expect(state.responses.get("resp_old", 999)?.chatId).toBe("c");
    expect(state.responses.get("resp_old", 1_000)).toBeUndefined();
    const removed = pruneState({ state, logger: silentLogger(), now: () => 2_000 });
    expect(removed.responses).toBe(1);
    expect(state.responses.get("resp_new", 2_000)?.id).toBe("resp_new");
    expect(state.responses.delete("resp_old")).toBe(false);
    expect(state.responses.delete("resp_new")).toBe(true);
    state.close();
  });
});
