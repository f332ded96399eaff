import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HeraldError } from "../../core/errors.js";
import type { InboundMessage } from "../../core/types.js";
import { LATEST_SCHEMA_VERSION, migrate, migrations } from "../../sessions/migrations.js";
import { PAIRING_ALPHABET } from "../../sessions/sqlite-pairing.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

const T0 = Date.UTC(2024, 0, 10, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let dir: string;
let file: string;
const opened: SqliteState[] = [];

function open(): SqliteState {
  const state = SqliteState.open(file);
  opened.push(state);
  return state;
}

/**
 * Simulates a crash and restart: a new connection reads the file while the old one is abandoned
 * without closing (no WAL checkpoint), as a killed process would leave it.
 */
function reopen(_crashed: SqliteState): SqliteState {
  return open();
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "herald-state-"));
  file = join(dir, "state.db");
});

afterEach(() => {
  for (const state of opened.splice(0)) state.close();
  rmSync(dir, { recursive: true, force: true });
});

const inbound = (messageId: string, text = "hello"): InboundMessage => ({
  platform: "telegram",
  messageId,
  chat: { platform: "telegram", chatId: "100" },
  chatType: "dm",
  sender: { id: "100", name: "Ada" },
  text,
  mentioned: true,
  meta: { subject: "x" },
});

const turnBase = {
  sessionId: "s1",
  sessionKey: "telegram:dm:100",
  chat: { platform: "telegram", chatId: "100" },
  userId: "100",
  source: "chat" as const,
  input: "hello",
};

describe("inbound ledger", () => {
  it("records a message once and replays unhandled ones after a restart, in received order", () => {
    let state = open();
    expect(state.ledger.record(inbound("1", "first"), T0)).toBe(true);
    expect(state.ledger.record(inbound("1", "first again"), T0 + 1)).toBe(false);
    expect(state.ledger.record(inbound("2", "second"), T0 + 2)).toBe(true);
    expect(state.ledger.record({ ...inbound("1"), platform: "discord" }, T0 + 3)).toBe(true);
    state.ledger.markHandled("discord", "1", "accepted");

    state = reopen(state);
    expect(state.ledger.unhandled()).toEqual([inbound("1", "first"), inbound("2", "second")]);
    expect(state.ledger.record(inbound("1"), T0 + 4)).toBe(false);
    state.ledger.markHandled("telegram", "1", "accepted");
    state.ledger.markHandled("telegram", "2", "ignored");

    state = reopen(state);
    expect(state.ledger.unhandled()).toEqual([]);
    expect(state.ledger.record(inbound("2"), T0 + 5)).toBe(false);
  });

  it("prune forgets only handled entries older than the cut-off", () => {
    const state = open();
    state.ledger.record(inbound("old-handled"), T0);
    state.ledger.record(inbound("old-unhandled"), T0);
    state.ledger.record(inbound("new-handled"), T0 + HOUR);
    state.ledger.markHandled("telegram", "old-handled", "accepted");
    state.ledger.markHandled("telegram", "new-handled", "accepted");
    expect(state.ledger.prune(T0 + MINUTE)).toBe(1);
    expect(state.ledger.record(inbound("old-handled"), T0 + 2 * HOUR)).toBe(true);
    expect(state.ledger.record(inbound("new-handled"), T0 + 2 * HOUR)).toBe(false);
    expect(state.ledger.unhandled().map((m) => m.messageId)).toEqual(["old-unhandled", "old-handled"]);
  });
});

describe("turn journal", () => {
  const turn = (id: string, sessionKey = "telegram:dm:100") => ({
    id,
    sessionId: "s1",
    sessionKey,
    chat: { platform: "telegram", chatId: "100" },
    userId: "100",
    source: "chat" as const,
    input: "hello",
    inbound: inbound(`m-${id}`),
    options: { model: "small" },
  });

  it("moves pending → running → done once, and a second result is stale", () => {
    const state = open();
    const created = state.turns.create(turn("t1"), T0);
    expect(created).toMatchObject({ id: "t1", status: "pending", attempts: 0, createdAt: T0 });
    expect(created.inbound).toEqual(inbound("m-t1"));
    expect(created.options).toEqual({ model: "small" });
    expect(state.turns.markRunning("t1", T0 + 1)).toBe(true);
    expect(state.turns.markRunning("t1", T0 + 2)).toBe(false);
    expect(state.turns.get("t1")).toMatchObject({ status: "running", attempts: 1, startedAt: T0 + 1 });
    expect(state.turns.finish("t1", "done", undefined, T0 + 3)).toBe(true);
    expect(state.turns.finish("t1", "failed", "late error", T0 + 4)).toBe(false);
    expect(state.turns.get("t1")).toMatchObject({ status: "done", finishedAt: T0 + 3 });
    expect(state.turns.get("t1")?.error).toBeUndefined();
    expect(state.turns.finish("no-such-turn", "done")).toBe(false);
    expect(state.turns.get("no-such-turn")).toBeUndefined();
  });

  it("journals a turn claimed as it is created as create then markRunning would, crash recovery included", () => {
    const state = open();
    const created = state.turns.create(turn("r1"), T0, { running: true });
    expect(created).toMatchObject({ id: "r1", status: "running", attempts: 1, startedAt: T0 });
    state.turns.create(turn("r2"), T0);
    state.turns.markRunning("r2", T0);
    const { id: _r1, inbound: _i1, ...one } = state.turns.get("r1")!;
    const { id: _r2, inbound: _i2, ...two } = state.turns.get("r2")!;
    expect(one).toEqual(two);
    expect(state.turns.markRunning("r1", T0 + 1)).toBe(false);
    // Found running at a start: run once more, as any turn cut short by a crash.
    expect(state.turns.requeueCrashed().map((t) => [t.id, t.attempts])).toEqual([
      ["r1", 1],
      ["r2", 1],
    ]);
  });

  it("a cancelled turn's late result is refused", () => {
    const state = open();
    state.turns.create(turn("t1"), T0);
    state.turns.markRunning("t1", T0);
    expect(state.turns.finish("t1", "cancelled", undefined, T0 + 1)).toBe(true);
    expect(state.turns.finish("t1", "done", undefined, T0 + 2)).toBe(false);
    expect(state.turns.get("t1")?.status).toBe("cancelled");
  });

  it("names a session's next open turn, oldest first", () => {
    const state = open();
    state.turns.create(turn("a1"), T0);
    state.turns.create(turn("a2"), T0 + 1);
    state.turns.markRunning("a1", T0 + 2);
    expect(state.turns.nextOpen("telegram:dm:100")).toEqual({ id: "a1", status: "running" });
    state.turns.finish("a1", "done", undefined, T0 + 3);
    expect(state.turns.nextOpen("telegram:dm:100")).toEqual({ id: "a2", status: "pending" });
    expect(state.turns.nextOpen("slack:dm:1")).toBeUndefined();
  });

  it("lists open turns per session in creation order and requeues running ones after a restart", () => {
    let state = open();
    state.turns.create(turn("a1"), T0);
    state.turns.create(turn("b1", "discord:dm:7"), T0 + 1);
    state.turns.create(turn("a2"), T0 + 2);
    state.turns.create(turn("a3"), T0 + 3);
    state.turns.markRunning("a1", T0 + 4);
    state.turns.finish("a3", "failed", "boom", T0 + 5);
    expect(state.turns.openTurns("telegram:dm:100").map((t) => t.id)).toEqual(["a1", "a2"]);

    state = reopen(state);
    expect(state.turns.allOpen().map((t) => [t.id, t.status])).toEqual([
      ["a1", "running"],
      ["b1", "pending"],
      ["a2", "pending"],
    ]);
    // Found running at start: the process that ran it ended without a clean stop; the run counts.
    expect(state.turns.requeueCrashed().map((t) => [t.id, t.status, t.attempts])).toEqual([
      ["a1", "pending", 1],
    ]);
    expect(state.turns.markRunning("a1", T0 + 10)).toBe(true);
    expect(state.turns.get("a1")?.attempts).toBe(2);
    // A clean stop hands it back without counting that run.
    expect(state.turns.handBack(["a1", "b1"])).toBe(1);
    expect(state.turns.get("a1")).toMatchObject({ status: "pending", attempts: 1 });
    expect(state.turns.requeueCrashed()).toEqual([]);
    expect(state.turns.get("a3")).toMatchObject({ status: "failed", error: "boom" });
  });
});

describe("transaction", () => {
  it("commits ledger entry and turn together, or neither when the function throws", () => {
    const state = open();
    expect(() =>
      state.transaction(() => {
        state.ledger.record(inbound("1"), T0);
        state.turns.create({ ...turnBase, id: "t1" }, T0);
        throw new Error("crash between the two");
      }),
    ).toThrow("crash between the two");
    expect(state.ledger.unhandled()).toEqual([]);
    expect(state.turns.get("t1")).toBeUndefined();
    expect(state.ledger.record(inbound("1"), T0)).toBe(true);

    const result = state.transaction(() => {
      const { session } = state.sessions.open(
        { chat: { platform: "telegram", chatId: "100" }, chatType: "dm", userId: "100" },
        { mode: "none", idleMinutes: 60, atHour: 4 },
        T0,
      );
      state.sessions.append(session.id, [{ role: "assistant", content: "hi" }], { now: T0 });
      state.outbox.add({ platform: "telegram", chatId: "100" }, { text: "hi" }, "t2", T0);
      return session.id;
    });
    const reopened = reopen(state);
    expect(reopened.sessions.load(result)).toHaveLength(1);
    expect(reopened.outbox.pending()).toHaveLength(1);
  });
});

describe("outbox", () => {
  const chat = { platform: "telegram", chatId: "100" };

  it("keys the message by the item id and delivers due items oldest first across a restart", () => {
    let state = open();
    const first = state.outbox.add(chat, { text: "one", kind: "reply", replyToId: "9" }, "t1", T0);
    const second = state.outbox.add(chat, { text: "two" }, undefined, T0 + 1);
    expect(first.message).toEqual({ text: "one", kind: "reply", replyToId: "9", idempotencyKey: first.id });
    expect(second.id).not.toBe(first.id);
    expect(state.outbox.due(T0 - 1)).toEqual([]);

    state = reopen(state);
    expect(state.outbox.due(T0 + 1)).toEqual([first, second]);
    expect(state.outbox.due(T0 + 1, 1).map((i) => i.id)).toEqual([first.id]);
  });

  it("retries later from the first unsent chunk, and forgets delivered or failed items", () => {
    let state = open();
    const item = state.outbox.add(chat, { text: "long reply" }, "t1", T0);
    const other = state.outbox.add(chat, { text: "notice" }, undefined, T0);
    state.outbox.chunkSent(item.id, 0);
    state.outbox.chunkSent(item.id, 1);
    state.outbox.retryLater(item.id, "429 Too Many Requests", 30_000, T0 + 5);
    expect(state.outbox.due(T0 + 10).map((i) => i.id)).toEqual([other.id]);

    state = reopen(state);
    const [retried] = state.outbox.due(T0 + 5 + 30_000);
    expect(retried).toMatchObject({
      id: item.id,
      chunksSent: 2,
      attempts: 1,
      lastError: "429 Too Many Requests",
    });
    expect(retried?.nextAttemptAt).toBe(T0 + 5 + 30_000);
    state.outbox.delivered(item.id);
    state.outbox.failed(other.id, "403 bot was blocked by the user");
    expect(state.outbox.pending()).toEqual([]);
    expect(state.outbox.due(T0 + HOUR)).toEqual([]);
  });

  it("marks an item failed after the last allowed attempt", () => {
    const state = SqliteState.open(file, { outboxMaxAttempts: 3 });
    opened.push(state);
    const item = state.outbox.add(chat, { text: "x" }, undefined, T0);
    state.outbox.retryLater(item.id, "e1", 1, T0);
    state.outbox.retryLater(item.id, "e2", 1, T0);
    expect(state.outbox.pending()).toHaveLength(1);
    state.outbox.retryLater(item.id, "e3", 1, T0);
    expect(state.outbox.pending()).toEqual([]);
    expect(state.outbox.due(T0 + HOUR)).toEqual([]);
  });
});

describe("pairing", () => {
  const request = (userId: string) => ({
    platform: "telegram",
    userId,
    userName: `user ${userId}`,
    chatId: userId,
  });

  function issued(result: ReturnType<SqliteState["pairing"]["issue"]>): { code: string; expiresAt: number } {
    if ("limited" in result) throw new Error(`unexpectedly rate-limited: ${JSON.stringify(result)}`);
    return result;
  }

  it("issues 8-character codes from the alphabet without look-alikes", () => {
    const state = open();
    const pattern = new RegExp(`^[${PAIRING_ALPHABET}]{8}$`);
    const codes = new Set<string>();
    for (let i = 0; i < 60; i++) {
      // Two hours apart, so earlier codes have expired and no rate limit applies.
      const { code } = issued(state.pairing.issue(request(String(i)), T0 + i * 2 * HOUR));
      expect(code).toMatch(pattern);
      expect(code).not.toMatch(/[0O1IL]/);
      codes.add(code);
    }
    expect(codes.size).toBe(60);
  });

  it("stores only a hash: the plain code appears nowhere in the database file", () => {
    const state = open();
    const codes = [0, 1, 2].map((i) => issued(state.pairing.issue(request(String(i)), T0)).code);
    expect(state.pairing.pending(T0).map((r) => r.userId)).toEqual(["0", "1", "2"]);
    state.close();
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    const text = bytes.toString("latin1").toUpperCase();
    expect(text).toContain("USER 1"); // the pending request itself is stored
    for (const code of codes) expect(text).not.toContain(code);
  });

  it("codes expire after an hour", () => {
    const state = open();
    const { code, expiresAt } = issued(state.pairing.issue(request("1"), T0));
    expect(expiresAt).toBe(T0 + HOUR);
    expect(state.pairing.pending(T0 + HOUR - 1)).toMatchObject([
      {
        platform: "telegram",
        userId: "1",
        userName: "user 1",
        chatId: "1",
        createdAt: T0,
        expiresAt: T0 + HOUR,
      },
    ]);
    expect(state.pairing.pending(T0 + HOUR)).toEqual([]);
    expect(state.pairing.approve(code, T0 + HOUR)).toBeUndefined();
    expect(state.pairing.isApproved("telegram", "1")).toBe(false);
  });

  it("approve is case-insensitive and one-time; allow and revoke manage the approved list", () => {
    const state = open();
    const { code } = issued(state.pairing.issue(request("1"), T0));
    expect(state.pairing.approve(code.toLowerCase(), T0 + MINUTE)).toEqual({
      platform: "telegram",
      userId: "1",
    });
    expect(state.pairing.approve(code, T0 + MINUTE)).toBeUndefined();
    expect(state.pairing.approve("ABCDEFGH", T0)).toBeUndefined();
    expect(state.pairing.isApproved("telegram", "1")).toBe(true);
    expect(state.pairing.isApproved("discord", "1")).toBe(false);
    expect(state.pairing.pending(T0 + MINUTE)).toEqual([]);
    state.pairing.allow("discord", "7");
    expect(state.pairing.approved().map((a) => [a.platform, a.userId])).toEqual([
      ["telegram", "1"],
      ["discord", "7"],
    ]);
    expect(state.pairing.approved()[0]?.approvedAt).toBe(T0 + MINUTE);
    expect(state.pairing.revoke("telegram", "1")).toBe(true);
    expect(state.pairing.revoke("telegram", "1")).toBe(false);
    expect(state.pairing.isApproved("telegram", "1")).toBe(false);
  });

  it("limits a user to one code per 10 minutes; a later code replaces the earlier one", () => {
    const state = open();
    const first = issued(state.pairing.issue(request("1"), T0));
    expect(state.pairing.issue(request("1"), T0 + 4 * MINUTE)).toEqual({
      limited: true,
      retryAfterMs: 6 * MINUTE,
    });
    const second = issued(state.pairing.issue(request("1"), T0 + 10 * MINUTE));
    expect(second.code).not.toBe(first.code);
    expect(state.pairing.pending(T0 + 10 * MINUTE)).toHaveLength(1);
    expect(state.pairing.approve(first.code, T0 + 11 * MINUTE)).toBeUndefined();
    expect(state.pairing.approve(second.code, T0 + 11 * MINUTE)).toEqual({
      platform: "telegram",
      userId: "1",
    });
  });

  it("issues no code while 10 are pending, until the oldest expires", () => {
    const state = open();
    for (let i = 0; i < 10; i++) issued(state.pairing.issue(request(String(i)), T0 + i * MINUTE));
    expect(state.pairing.issue(request("new"), T0 + 20 * MINUTE)).toEqual({
      limited: true,
      retryAfterMs: 40 * MINUTE,
    });
    expect(state.pairing.pending(T0 + 20 * MINUTE)).toHaveLength(10);
    expect("code" in state.pairing.issue(request("new"), T0 + HOUR)).toBe(true);
  });
});

describe("kv", () => {
  it("keeps namespaces apart and persists across a restart", () => {
    let state = open();
    const telegram = state.kv("telegram");
    telegram.set("offset", "41");
    telegram.set("offset", "42");
    state.kv("matrix").set("offset", "s1_2");
    state.kv("matrix").set("token", "abc");
    state.kv("matrix").delete("token");

    state = reopen(state);
    expect(state.kv("telegram").get("offset")).toBe("42");
    expect(state.kv("matrix").get("offset")).toBe("s1_2");
    expect(state.kv("matrix").get("token")).toBeUndefined();
    expect(state.kv("discord").get("offset")).toBeUndefined();
  });
});

describe("sessions on a file", () => {
  it("keep their messages across a restart", () => {
    let state = open();
    const parts = { chat: { platform: "telegram", chatId: "100" }, chatType: "dm" as const, userId: "100" };
    const policy = { mode: "none" as const, idleMinutes: 60, atHour: 4 };
    const { session } = state.sessions.open(parts, policy, T0);
    state.sessions.append(session.id, [{ role: "user", content: "remember the blue door" }], { now: T0 });
    state = reopen(state);
    expect(state.sessions.open(parts, policy, T0 + MINUTE).session.id).toBe(session.id);
    expect(state.sessions.load(session.id).map((m) => m.message.content)).toEqual(["remember the blue door"]);
    expect(state.sessions.search("blue door").map((h) => h.sessionId)).toEqual([session.id]);
  });
});

describe("migrations", () => {
  const userVersion = (path: string): number => {
    const db = new Database(path);
    try {
      return db.pragma("user_version", { simple: true }) as number;
    } finally {
      db.close();
    }
  };

  it("brings a new file to the latest version in WAL mode, and reopening is a no-op", () => {
    open().close();
    expect(LATEST_SCHEMA_VERSION).toBe(migrations.length);
    expect(userVersion(file)).toBe(LATEST_SCHEMA_VERSION);
    const db = new Database(file);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(migrate(db)).toEqual([]);
    db.close();
    expect(() => open()).not.toThrow();
  });

  it("refuses a database written by a newer Herald, leaving it untouched", () => {
    const db = new Database(file);
    db.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    db.close();
    let error: unknown;
    try {
      SqliteState.open(file);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HeraldError);
    expect((error as HeraldError).code).toBe("state_error");
    expect((error as HeraldError).message).toMatch(/newer Herald.*Upgrade Herald/);
    expect(userVersion(file)).toBe(LATEST_SCHEMA_VERSION + 1);
  });

  it("rolls back every step of a run when one migration fails", () => {
    const db = new Database(file);
    const broken = [
      ...migrations,
      {
        version: LATEST_SCHEMA_VERSION + 1,
        description: "broken",
        up: (d: Database.Database) => {
          d.exec("CREATE TABLE extra (x)");
          d.exec("THIS IS NOT SQL");
        },
      },
    ];
    expect(() => migrate(db, broken)).toThrow();
    expect(db.pragma("user_version", { simple: true })).toBe(0);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('sessions', 'extra')").all()).toEqual(
      [],
    );
    db.close();
  });

  it("names the file when it is not a database", () => {
    writeFileSync(file, "this is not a database, just some text that is long enough to have a header");
    expect(() => SqliteState.open(file)).toThrow(/Cannot open the state database .*state\.db/);
  });
});

describe("group commit", () => {
  const chat = { platform: "telegram", chatId: "100" };
  const openBatched = () => {
    const state = SqliteState.open(file, { groupCommit: true });
    opened.push(state);
    return state;
  };
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it("commits the transactions of one event-loop turn together, then runs their effects in order", async () => {
    const state = openBatched();
    const reader = open();
    const ran: string[] = [];
    state.transaction(() => state.outbox.add(chat, { text: "one" }, "t1", T0));
    state.afterCommit(() => ran.push(`one: ${reader.outbox.pending().length} visible`));
    state.transaction(() => state.outbox.add(chat, { text: "two" }, "t2", T0));
    state.afterCommit(() => ran.push(`two: ${reader.outbox.pending().length} visible`));
    const committed = state.committed();
    // Another connection (another process) sees nothing yet, and no effect has run.
    expect(reader.outbox.pending()).toEqual([]);
    expect(ran).toEqual([]);
    await committed;
    expect(ran).toEqual(["one: 2 visible", "two: 2 visible"]);
    expect(reader.outbox.pending().map((i) => i.message.text)).toEqual(["one", "two"]);
    // With nothing pending, an effect runs at once.
    state.afterCommit(() => ran.push("now"));
    expect(ran).toHaveLength(3);
  });

  it("rolls back only the transaction that threw; the rest of the batch commits", async () => {
    const state = openBatched();
    state.transaction(() => state.ledger.record(inbound("1"), T0));
    expect(() =>
      state.transaction(() => {
        state.ledger.record(inbound("2"), T0);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    state.transaction(() => state.ledger.record(inbound("3"), T0));
    await state.committed();
    expect(
      open()
        .ledger.unhandled()
        .map((m) => m.messageId),
    ).toEqual(["1", "3"]);
  });

  it("commits an open batch on close, and a later tick opens a new one", async () => {
    let state = openBatched();
    state.transaction(() => state.ledger.record(inbound("1"), T0));
    await tick();
    state.transaction(() => state.ledger.record(inbound("2"), T0));
    state.close();
    state = open();
    expect(state.ledger.unhandled().map((m) => m.messageId)).toEqual(["1", "2"]);
  });

  it("an effect that throws is reported and the others still run", async () => {
    const errors: unknown[] = [];
    const state = SqliteState.open(file, { groupCommit: true, onEffectError: (err) => errors.push(err) });
    opened.push(state);
    const ran: string[] = [];
    state.transaction(() => state.ledger.record(inbound("1"), T0));
    state.afterCommit(() => {
      throw new Error("effect failed");
    });
    state.afterCommit(() => ran.push("second"));
    await tick();
    await tick();
    expect(ran).toEqual(["second"]);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain("effect failed");
  });
});

describe("history cache", () => {
  const parts = { chat: { platform: "telegram", chatId: "100" }, chatType: "dm" as const, userId: "100" };
  const policy = { mode: "none" as const, idleMinutes: 60, atHour: 4 };
  const openCached = () => {
    const state = SqliteState.open(file, { historyCacheBytes: 64 * 1024 });
    opened.push(state);
    return state;
  };

  it("loads what the file holds after appends, compactions and tool calls", () => {
    const state = openCached();
    const { session } = state.sessions.open(parts, policy, T0);
    state.sessions.append(session.id, [{ role: "user", content: "hi", name: "Ada" }], { now: T0 });
    expect(state.sessions.load(session.id)).toHaveLength(1);
    state.sessions.append(
      session.id,
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "x", arguments: "{}" } }],
        },
        { role: "tool", content: "result", tool_call_id: "c1" },
        { role: "assistant", content: "done" },
      ],
      { now: T0 + 1, turnId: "t1" },
    );
    const uncached = () => open().sessions.load(session.id);
    expect(state.sessions.load(session.id)).toEqual(uncached());
    state.sessions.compact(session.id, 2, "they said hi");
    expect(state.sessions.load(session.id)).toEqual(uncached());
    state.sessions.append(session.id, [{ role: "user", content: "again" }], { now: T0 + 2 });
    expect(state.sessions.load(session.id)).toEqual(uncached());
    expect(state.sessions.load(session.id).map((m) => m.seq)).toEqual([2, 3, 4, 5]);
  });

  it("forgets an append that a failed transaction rolled back", () => {
    const state = openCached();
    const { session } = state.sessions.open(parts, policy, T0);
    state.sessions.append(session.id, [{ role: "user", content: "kept" }], { now: T0 });
    expect(state.sessions.load(session.id)).toHaveLength(1);
    expect(() =>
      state.transaction(() => {
        state.sessions.append(session.id, [{ role: "user", content: "rolled back" }], { now: T0 });
        throw new Error("crash");
      }),
    ).toThrow("crash");
    expect(state.sessions.load(session.id).map((m) => m.message.content)).toEqual(["kept"]);
  });

  it("is off unless asked for: a second connection sees another's appends", () => {
    const writer = open();
    const reader = open();
    const { session } = writer.sessions.open(parts, policy, T0);
    expect(reader.sessions.load(session.id)).toEqual([]);
    writer.sessions.append(session.id, [{ role: "user", content: "hi" }], { now: T0 });
    expect(reader.sessions.load(session.id)).toHaveLength(1);
  });
});

describe("search index", () => {
  const policy = { mode: "none" as const, idleMinutes: 60, atHour: 4 };
  const parts = (chatId: string) => ({
    chat: { platform: "telegram", chatId },
    chatType: "dm" as const,
    userId: chatId,
  });
  const integrity = () => {
    const db = new Database(file);
    try {
      db.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)");
    } finally {
      db.close();
    }
  };

  it("finds what was just appended, and stays sound when a prune removes the newest rows", () => {
    const state = open();
    const a = state.sessions.open(parts("1"), policy, T0).session;
    state.sessions.append(a.id, [{ role: "user", content: "alpha one" }], { now: T0 });
    state.sessions.append(a.id, [{ role: "assistant", content: "alpha two" }], { now: T0 });
    // Not yet indexed (appends index in bulk), yet found: search indexes first.
    expect(state.sessions.search("alpha")).toHaveLength(2);

    // The newest rows, indexed, are pruned; their ids are handed out again, to rows not yet indexed.
    const b = state.sessions.open(parts("2"), policy, T0).session;
    state.sessions.append(b.id, [{ role: "user", content: "beta gone" }], { now: T0 });
    expect(state.sessions.search("beta")).toHaveLength(1);
    state.sessions.reset(b.key, "manual");
    state.transaction(() => state.sessions.prune(Date.now() + HOUR));
    const c = state.sessions.open(parts("3"), policy, T0).session;
    state.sessions.append(c.id, [{ role: "user", content: "gamma new" }], { now: T0 });
    expect(state.sessions.search("gamma").map((h) => h.sessionId)).toEqual([c.id]);
    expect(state.sessions.search("beta")).toEqual([]);
    expect(state.sessions.search("alpha")).toHaveLength(2);
    // Pruning indexed rows takes them out of the index.
    state.sessions.reset(a.key, "manual");
    state.sessions.prune(Date.now() + HOUR);
    expect(state.sessions.search("alpha")).toEqual([]);
    integrity();
  });

  it("indexes in bulk every few hundred messages, and an up-to-date index takes no write lock", () => {
    const state = open();
    const { session } = state.sessions.open(parts("1"), policy, T0);
    for (let i = 0; i < 300; i++) {
      state.sessions.append(session.id, [{ role: "user", content: `word${i} common` }], { now: T0 });
    }
    // 256 were indexed on the way; the rest wait for the next bulk step or search.
    expect(state.sessions.indexForSearch()).toBe(300 - 256);
    expect(state.sessions.indexForSearch()).toBe(0);
    const writer = new Database(file);
    writer.exec("BEGIN IMMEDIATE");
    try {
      expect(open().sessions.search("word7")).toHaveLength(1);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
    integrity();
  });

  it("a v2 file keeps its index: messages indexed by the old triggers are not indexed twice", () => {
    const db = new Database(file);
    migrate(db, migrations.slice(0, 2));
    db.exec(`INSERT INTO sessions (id, key, platform, chat_id, chat_type, user_id, created_at, last_active_at)
             VALUES ('s', 'telegram:dm:1', 'telegram', '1', 'dm', '1', 0, 0)`);
    db.exec(
      "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('s', 1, 'user', 'delta', 0)",
    );
    db.close();
    const state = open();
    expect(state.sessions.indexForSearch()).toBe(0);
    expect(state.sessions.search("delta")).toHaveLength(1);
    integrity();
  });
});
