/**
 * The shared cases every `SessionStore` implementation must pass. Call `sessionStoreContract` from a
 * test file, once per implementation; `makeStore` returns a fresh, empty store each time (keying group
 * chats by `groupMode`, per user when unset).
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage, GroupSessionMode, SessionKeyParts } from "../../core/types.js";
import type { ResetPolicy, SessionStore } from "../../sessions/types.js";

const T0 = Date.UTC(2024, 0, 10, 12, 0, 0);
const MINUTE = 60_000;

const none: ResetPolicy = { mode: "none", idleMinutes: 60, atHour: 4 };
const idle: ResetPolicy = { mode: "idle", idleMinutes: 60, atHour: 4 };
const dailyNewYork: ResetPolicy = { mode: "daily", idleMinutes: 60, atHour: 4, timezone: "America/New_York" };

const dm = (chatId: string): SessionKeyParts => ({
  chat: { platform: "telegram", chatId },
  chatType: "dm",
  userId: chatId,
});
const group = (chatId: string, userId: string): SessionKeyParts => ({
  chat: { platform: "discord", chatId },
  chatType: "group",
  userId,
});

const user = (content: string): ChatMessage => ({ role: "user", content });
const assistant = (content: string): ChatMessage => ({ role: "assistant", content });

export function sessionStoreContract(
  name: string,
  makeStore: (options?: { groupMode?: GroupSessionMode }) => SessionStore,
): void {
  describe(`SessionStore contract: ${name}`, () => {
    it("open creates an active session keyed by chat", () => {
      const store = makeStore();
      const { session, autoReset } = store.open(dm("100"), none, T0);
      expect(autoReset).toBeUndefined();
      expect(session).toMatchObject({
        key: "telegram:dm:100",
        chat: { platform: "telegram", chatId: "100" },
        chatType: "dm",
        userId: "100",
        createdAt: T0,
        lastActiveAt: T0,
        messageCount: 0,
      });
      expect(session.endedAt).toBeUndefined();
      expect(store.get(session.id)).toEqual(session);
      expect(store.get("no-such-session")).toBeUndefined();
    });

    it("open again returns the same session; other chats, threads and group members get their own", () => {
      const store = makeStore();
      const first = store.open(dm("100"), none, T0).session;
      expect(store.open(dm("100"), none, T0 + MINUTE).session.id).toBe(first.id);
      expect(store.open(dm("101"), none, T0).session.id).not.toBe(first.id);
      const alice = store.open(group("42", "alice"), none, T0).session;
      const bob = store.open(group("42", "bob"), none, T0).session;
      expect(alice.key).toBe("discord:group:42:u:alice");
      expect(bob.id).not.toBe(alice.id);
      const thread = store.open(
        { chat: { platform: "discord", chatId: "42", threadId: "9" }, chatType: "group", userId: "alice" },
        none,
        T0,
      ).session;
      expect(thread.key).toBe("discord:thread:42:9");
      expect(thread.chat.threadId).toBe("9");
    });

    it("append numbers messages in order and load returns them in that order", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      expect(store.append(id, [user("hi"), assistant("hello")], { turnId: "t1", now: T0 + 1000 })).toEqual([
        1, 2,
      ]);
      expect(store.append(id, [user("how are you?")], { now: T0 + 2000 })).toEqual([3]);
      const loaded = store.load(id);
      expect(loaded.map((m) => [m.seq, m.message])).toEqual([
        [1, user("hi")],
        [2, assistant("hello")],
        [3, user("how are you?")],
      ]);
      expect(loaded[0]).toMatchObject({ sessionId: id, turnId: "t1", createdAt: T0 + 1000 });
      expect(loaded[2]?.turnId).toBeUndefined();
      expect(store.get(id)).toMatchObject({ messageCount: 3, lastActiveAt: T0 + 2000 });
      expect(store.append(id, [], { now: T0 + 3000 })).toEqual([]);
      expect(() => store.append("no-such-session", [user("x")])).toThrow(/no such session/);
    });

    it("round-trips tool calls, tool results, user names and null assistant content", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      const messages: ChatMessage[] = [
        { role: "system", content: "be brief" },
        { role: "user", content: "weather?", name: "alice" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: "tool", content: '{"temp":-3}', tool_call_id: "call_1" },
        { role: "assistant", content: "It is -3 °C in Oslo." },
      ];
      store.append(id, messages, { now: T0 });
      expect(store.load(id).map((m) => m.message)).toEqual(messages);
    });

    it("reset ends the active session and the next open starts a new one without a notice", () => {
      const store = makeStore();
      const old = store.open(dm("100"), none, T0).session;
      store.append(old.id, [user("remember 42")], { now: T0 });
      const ended = store.reset("telegram:dm:100", "manual");
      expect(ended).toMatchObject({ id: old.id, endReason: "manual" });
      expect(ended?.endedAt).toBeTypeOf("number");
      expect(store.get(old.id)?.endReason).toBe("manual");
      const next = store.open(dm("100"), none, T0 + MINUTE);
      expect(next.session.id).not.toBe(old.id);
      expect(next.autoReset).toBeUndefined();
      expect(store.load(next.session.id)).toEqual([]);
      expect(store.load(old.id)).toHaveLength(1);
      expect(store.reset("telegram:dm:nobody", "manual")).toBeUndefined();
    });

    it("idle policy ends a silent session and reports it exactly once", () => {
      const store = makeStore();
      const old = store.open(dm("100"), idle, T0).session;
      store.append(old.id, [user("hi")], { now: T0 });
      expect(store.open(dm("100"), idle, T0 + 60 * MINUTE).session.id).toBe(old.id);
      const reopened = store.open(dm("100"), idle, T0 + 61 * MINUTE);
      expect(reopened.autoReset).toEqual({ reason: "idle", previousSessionId: old.id });
      expect(reopened.session.id).not.toBe(old.id);
      expect(store.get(old.id)).toMatchObject({ endReason: "idle", endedAt: T0 + 61 * MINUTE });
      const again = store.open(dm("100"), idle, T0 + 62 * MINUTE);
      expect(again.session.id).toBe(reopened.session.id);
      expect(again.autoReset).toBeUndefined();
    });

    it("daily policy resets when the hour passes in the policy's time zone", () => {
      const store = makeStore();
      // 2024-01-10 03:30 in New York (UTC-5) is 08:30 UTC; 04:00 there is 09:00 UTC.
      const lastActive = Date.UTC(2024, 0, 10, 8, 30);
      const { id } = store.open(dm("100"), dailyNewYork, lastActive).session;
      store.append(id, [user("late night")], { now: lastActive });
      expect(store.open(dm("100"), dailyNewYork, Date.UTC(2024, 0, 10, 8, 59)).session.id).toBe(id);
      const after = store.open(dm("100"), dailyNewYork, Date.UTC(2024, 0, 10, 9, 0));
      expect(after.autoReset).toEqual({ reason: "daily", previousSessionId: id });
      // An active session started after 04:00 lives until 04:00 the next day.
      store.append(after.session.id, [user("morning")], { now: Date.UTC(2024, 0, 10, 9, 0) });
      expect(store.open(dm("100"), dailyNewYork, Date.UTC(2024, 0, 11, 8, 59)).autoReset).toBeUndefined();
      expect(store.open(dm("100"), dailyNewYork, Date.UTC(2024, 0, 11, 9, 0)).autoReset?.reason).toBe(
        "daily",
      );
    });

    it("daily policy follows daylight-saving time (04:00 EDT is 08:00 UTC on 2024-03-10)", () => {
      const store = makeStore();
      const lastActive = Date.UTC(2024, 2, 10, 7, 30); // 03:30 EDT, just after the 02:00 jump
      const { id } = store.open(dm("100"), dailyNewYork, lastActive).session;
      store.append(id, [user("hi")], { now: lastActive });
      expect(store.open(dm("100"), dailyNewYork, Date.UTC(2024, 2, 10, 7, 59)).autoReset).toBeUndefined();
      expect(store.open(dm("100"), dailyNewYork, Date.UTC(2024, 2, 10, 8, 30)).autoReset?.reason).toBe(
        "daily",
      );
    });

    it("daily policy at an hour skipped by DST resets at the jump; a repeated hour at its first occurrence", () => {
      const store = makeStore();
      // 2024-03-10 02:00 does not exist in New York: clocks jump from 01:59 EST to 03:00 EDT (07:00 UTC).
      const skipped: ResetPolicy = { ...dailyNewYork, atHour: 2 };
      const a = store.open(dm("100"), skipped, Date.UTC(2024, 2, 10, 6, 30)).session;
      store.append(a.id, [user("hi")], { now: Date.UTC(2024, 2, 10, 6, 30) });
      expect(store.open(dm("100"), skipped, Date.UTC(2024, 2, 10, 6, 59)).autoReset).toBeUndefined();
      expect(store.open(dm("100"), skipped, Date.UTC(2024, 2, 10, 7, 0)).autoReset?.reason).toBe("daily");
      // 2024-11-03 01:00 happens twice in New York; the first is 01:00 EDT (05:00 UTC).
      const repeated: ResetPolicy = { ...dailyNewYork, atHour: 1 };
      const b = store.open(dm("200"), repeated, Date.UTC(2024, 10, 3, 4, 30)).session;
      store.append(b.id, [user("hi")], { now: Date.UTC(2024, 10, 3, 4, 30) });
      expect(store.open(dm("200"), repeated, Date.UTC(2024, 10, 3, 4, 59)).autoReset).toBeUndefined();
      expect(store.open(dm("200"), repeated, Date.UTC(2024, 10, 3, 5, 0)).autoReset?.reason).toBe("daily");
    });

    it("daily policy works in zones with half-hour offsets (Asia/Kolkata, UTC+5:30)", () => {
      const store = makeStore();
      const policy: ResetPolicy = { mode: "daily", idleMinutes: 60, atHour: 6, timezone: "Asia/Kolkata" };
      const lastActive = Date.UTC(2024, 5, 1, 0, 0); // 05:30 in Kolkata
      const { id } = store.open(dm("100"), policy, lastActive).session;
      store.append(id, [user("hi")], { now: lastActive });
      expect(store.open(dm("100"), policy, Date.UTC(2024, 5, 1, 0, 29)).autoReset).toBeUndefined();
      expect(store.open(dm("100"), policy, Date.UTC(2024, 5, 1, 0, 30)).autoReset?.reason).toBe("daily");
    });

    it("policy none never resets", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      store.append(id, [user("hi")], { now: T0 });
      const later = store.open(dm("100"), none, T0 + 400 * 24 * 60 * MINUTE);
      expect(later.session.id).toBe(id);
      expect(later.autoReset).toBeUndefined();
    });

    it("search finds messages across sessions, ranked, with a snippet naming the session", () => {
      const store = makeStore();
      const a = store.open(dm("100"), none, T0).session;
      const b = store.open(group("42", "bob"), none, T0).session;
      store.append(a.id, [user("How do I deploy to kubernetes?"), assistant("Use kubectl apply.")], {
        now: T0,
      });
      store.append(b.id, [user("kubernetes deploy failed again"), user("unrelated chatter")], { now: T0 });
      const hits = store.search("deploy kubernetes");
      expect(hits.map((h) => [h.sessionId, h.seq]).sort()).toEqual(
        [
          [a.id, 1],
          [b.id, 1],
        ].sort(),
      );
      const hitA = hits.find((h) => h.sessionId === a.id);
      expect(hitA).toMatchObject({ sessionKey: "telegram:dm:100", role: "user", createdAt: T0 });
      expect(hitA?.snippet.toLowerCase()).toContain("kubernetes");
      expect(store.search("kubectl")).toHaveLength(1);
      expect(store.search("nothing-like-this-anywhere")).toEqual([]);
      expect(store.search("deploy", { limit: 1 })).toHaveLength(1);
    });

    it("search ignores case and accents, and falls back to any word when no message has all of them", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      store.append(id, [user("the kubernetes cluster")], { now: T0 });
      expect(store.search("kubernetes banana").map((h) => h.seq)).toEqual([1]);
      // allTerms (the hybrid search): no fallback.
      expect(store.search("kubernetes banana", { allTerms: true })).toEqual([]);
      expect(store.search("kubernetes cluster", { allTerms: true }).map((h) => h.seq)).toEqual([1]);
      store.append(id, [user("un café crème, s'il vous plaît")], { now: T0 });
      expect(store.search("CAFE creme").map((h) => h.seq)).toEqual([2]);
    });

    it("search respects keyPrefix, userId and excludeSessionId", () => {
      const store = makeStore();
      const mine = store.open(dm("100"), none, T0).session;
      const alice = store.open(group("42", "alice"), none, T0).session;
      const bob = store.open(group("42", "bob"), none, T0).session;
      for (const s of [mine, alice, bob])
        store.append(s.id, [user(`secret recipe of ${s.userId}`)], { now: T0 });
      const ids = (hits: { sessionId: string }[]) => hits.map((h) => h.sessionId).sort();
      expect(ids(store.search("recipe"))).toEqual([mine.id, alice.id, bob.id].sort());
      expect(ids(store.search("recipe", { keyPrefix: "discord:group:42" }))).toEqual(
        [alice.id, bob.id].sort(),
      );
      expect(ids(store.search("recipe", { userId: "bob" }))).toEqual([bob.id]);
      expect(ids(store.search("recipe", { excludeSessionId: mine.id }))).toEqual([alice.id, bob.id].sort());
      expect(store.search("recipe", { keyPrefix: "slack:" })).toEqual([]);
    });

    it("search keeps the sender tag of a shared group's message whose excerpt starts mid-message", () => {
      const store = makeStore({ groupMode: "shared" });
      const room = store.open(group("42", "alice"), none, T0).session;
      expect(room.key).toBe("discord:group:42");
      const filler = "we talked about many unrelated things at length before getting to the point".repeat(3);
      store.append(room.id, [user(`[Alice] ${filler} then the zeppelin landed`)], { now: T0 });
      store.append(room.id, [user("[Bob #3f2a] zeppelin")], { now: T0 });
      const snippets = store.search("zeppelin").map((h) => [h.seq, h.snippet]);
      expect(snippets).toHaveLength(2);
      const long = snippets.find(([seq]) => seq === 1)?.[1] as string;
      expect(long).toMatch(/^\[Alice\] …/);
      expect(long).toContain("**zeppelin**");
      expect(snippets.find(([seq]) => seq === 2)?.[1]).toBe("[Bob #3f2a] **zeppelin**");
      // A DM's leading bracket is the user's own text: an excerpt without it is left as it is.
      const dmStore = makeStore({ groupMode: "shared" });
      const d = dmStore.open(dm("100"), none, T0).session;
      dmStore.append(d.id, [user(`[Alice] ${filler} then the zeppelin landed`)], { now: T0 });
      expect(dmStore.search("zeppelin")[0]?.snippet).toMatch(/^…/);
    });

    it("search treats quotes, brackets and operators in the query as plain words", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      store.append(id, [user("foo bar baz")], { now: T0 });
      for (const query of ['"foo (bar" OR', "foo AND", "NEAR(foo", "foo*", "bar:", "-foo ^bar", "'"]) {
        expect(() => store.search(query), query).not.toThrow();
      }
      expect(store.search('"foo (bar" OR').map((h) => h.seq)).toEqual([1]);
      expect(store.search("((( )))")).toEqual([]);
      expect(store.search("")).toEqual([]);
    });

    it("compact replaces old messages by a summary in load, and search still finds them", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      store.append(
        id,
        [user("my cat is called Whiskers"), assistant("Nice!"), user("and my dog?"), assistant("?")],
        {
          now: T0,
        },
      );
      store.compact(id, 2, "The user has a cat named Whiskers.");
      const loaded = store.load(id);
      expect(loaded.map((m) => m.seq)).toEqual([2, 3, 4]);
      expect(loaded[0]?.message.role).toBe("system");
      expect(loaded[0]?.message.content).toContain("The user has a cat named Whiskers.");
      expect(loaded[1]?.message).toEqual(user("and my dog?"));
      expect(store.search("Whiskers").map((h) => h.seq)).toContain(1);
      expect(store.append(id, [user("next")], { now: T0 })).toEqual([5]);
      store.compact(id, 4, "Cat Whiskers, asked about a dog.");
      expect(store.load(id).map((m) => [m.seq, m.message.role])).toEqual([
        [4, "system"],
        [5, "user"],
      ]);
    });

    it("truncate deletes the messages from a seq on, and a compaction reaching into them", () => {
      const store = makeStore();
      const { id } = store.open(dm("100"), none, T0).session;
      store.append(id, [user("one"), assistant("1"), user("two"), assistant("2")], { now: T0 });
      store.compact(id, 3, "one, 1 and two");
      expect(store.truncate(id, 3)).toBe(2);
      expect(store.load(id).map((m) => m.message)).toEqual([user("one"), assistant("1")]);
      expect(store.get(id)?.messageCount).toBe(2);
      expect(store.append(id, [user("three")], { now: T0 })).toEqual([3]);
      expect(store.truncate(id, 99)).toBe(0);
    });

    it("setTitle names a session; resume makes an ended one active again, ending the current", () => {
      const store = makeStore();
      const first = store.open(dm("100"), idle, T0).session;
      store.append(first.id, [user("about cats")], { now: T0 });
      expect(store.get(first.id)?.title).toBe("about cats");
      store.setTitle(first.id, "Cats");
      store.reset(first.key, "manual");
      const second = store.open(dm("100"), idle, T0 + MINUTE).session;
      const later = T0 + 3 * 60 * MINUTE;
      const resumed = store.resume(first.id, later);
      expect(resumed?.session).toMatchObject({ id: first.id, title: "Cats", lastActiveAt: later });
      expect(resumed?.session.endedAt).toBeUndefined();
      expect(resumed?.replaced?.id).toBe(second.id);
      expect(store.get(second.id)?.endReason).toBe("manual");
      // Active again with a fresh activity time: the idle policy does not end it at once.
      expect(store.open(dm("100"), idle, later + MINUTE)).toEqual({
        session: expect.objectContaining({ id: first.id }),
      });
      expect(store.resume("no-such-session")).toBeUndefined();
    });

    it("list returns sessions by newest activity, filtered by activeOnly and keyPrefix", () => {
      const store = makeStore();
      const a = store.open(dm("1"), none, T0).session;
      const b = store.open(dm("2"), none, T0 + 1000).session;
      const c = store.open(group("42", "carol"), none, T0 + 2000).session;
      store.append(a.id, [user("latest")], { now: T0 + 5000 });
      store.reset(b.key, "manual");
      expect(store.list().map((s) => s.id)).toEqual([a.id, c.id, b.id]);
      expect(store.list({ activeOnly: true }).map((s) => s.id)).toEqual([a.id, c.id]);
      expect(store.list({ keyPrefix: "telegram:" }).map((s) => s.id)).toEqual([a.id, b.id]);
      expect(store.list({ limit: 1 }).map((s) => s.id)).toEqual([a.id]);
    });

    it("list keeps one agent's sessions: a named agent's prefix, or the default agent's unprefixed keys", () => {
      const store = makeStore();
      const plain = store.open(dm("1"), none, T0).session;
      const family = store.open({ ...dm("1"), agent: "family" }, none, T0 + 1000).session;
      const work = store.open({ ...group("42", "carol"), agent: "work" }, none, T0 + 2000).session;
      expect(family.key).toBe("family/telegram:dm:1");
      expect(store.list({ agent: "family" }).map((s) => s.id)).toEqual([family.id]);
      expect(store.list({ agent: "work" }).map((s) => s.id)).toEqual([work.id]);
      expect(store.list({ agent: "default" }).map((s) => s.id)).toEqual([plain.id]);
      expect(store.list({ agent: "nobody" })).toEqual([]);
    });

    it("prune deletes ended sessions idle before the cut-off, with their messages, and keeps active ones", () => {
      const store = makeStore();
      const oldEnded = store.open(dm("1"), none, T0).session;
      store.append(oldEnded.id, [user("forgotten zebra")], { now: T0 });
      store.reset(oldEnded.key, "manual");
      const oldActive = store.open(dm("2"), none, T0).session;
      store.append(oldActive.id, [user("kept zebra")], { now: T0 });
      const recentEnded = store.open(dm("3"), none, T0 + 10 * MINUTE).session;
      store.reset(recentEnded.key, "manual");
      expect(store.prune(T0 + MINUTE)).toBe(1);
      expect(store.get(oldEnded.id)).toBeUndefined();
      expect(store.load(oldEnded.id)).toEqual([]);
      expect(store.get(oldActive.id)).toBeDefined();
      expect(store.get(recentEnded.id)).toBeDefined();
      expect(store.search("zebra").map((h) => h.sessionId)).toEqual([oldActive.id]);
      expect(store.prune(T0 + MINUTE)).toBe(0);
    });
  });
}
