/**
 * How many times a plain turn commits to state.db, counted where SQLite records it: the commit frames of
 * the write-ahead log (each write transaction that changed the file ends with one). A plain Telegram
 * turn through the whole gateway commits three times: the message taken in (before the update is
 * acknowledged), the turn's end (messages, usage, the reply's outbox item and the journal's final state
 * together), and the reply's delivery (after the platform confirmed it). Each is a separate moment of
 * the guarantee; one more is a write that escaped the unit of work, which this test is here to catch.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

/** The write-ahead log's commits so far, and the salt that changes when the log starts over. */
function walCommits(homeDir: string): { commits: number; salt: string } {
  const wal = readFileSync(join(homeDir, "state.db-wal"));
  const pageSize = wal.readUInt32BE(8);
  const salt = wal.subarray(16, 24);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    // A frame of an earlier generation of the log (before a checkpoint restarted it) ends the log.
    if (!wal.subarray(at + 8, at + 16).equals(salt)) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return { commits, salt: salt.toString("hex") };
}

/** Everything written so far is committed and every reply delivered. */
async function settled(h: Harness): Promise<void> {
  await h.gateway.runner.outbox.idle();
  await h.state.committed();
}

describe("a plain turn's commits", () => {
  it("takes the message, ends the turn and records the delivery in one commit each", async () => {
    const { fake, h } = await startTelegramGateway(running);
    // The model and the platform are slow enough to read the log at each step of the turn.
    h.llm.setDefault(() => ({ text: "hello", delayMs: 200 }));
    fake.userSends({ chatId: 111, fromId: 111, text: "warm up" });
    await botReplies(fake, 111, 1);
    await settled(h);

    const start = walCommits(h.homeDir);
    const turns = 4;
    const steps: number[][] = [];
    for (let n = 1; n <= turns; n++) {
      const before = walCommits(h.homeDir).commits;
      const asked = h.llm.requests.length;
      const sends = fake.callsTo("sendMessage").length;
      fake.fault("sendMessage", { delayMs: 200 });
      fake.userSends({ chatId: 111, fromId: 111, text: `hi ${n}` });
      await vi.waitFor(() => expect(h.llm.requests.length).toBeGreaterThan(asked), { interval: 5 });
      await h.state.committed();
      const taken = walCommits(h.homeDir).commits;
      await vi.waitFor(() => expect(fake.callsTo("sendMessage").length).toBeGreaterThan(sends), {
        interval: 5,
      });
      await h.state.committed();
      const ended = walCommits(h.homeDir).commits;
      expect(await botReplies(fake, 111, n + 1)).toHaveLength(n + 1);
      await settled(h);
      steps.push([taken - before, ended - taken, walCommits(h.homeDir).commits - ended]);
    }
    const end = walCommits(h.homeDir);
    expect(end.salt).toBe(start.salt);
    expect(steps).toEqual(Array.from({ length: turns }, () => [1, 1, 1]));
    expect(end.commits - start.commits).toBe(3 * turns);

    // What the one commit at the turn's end wrote is all there.
    const db = h.state.database;
    const turnRows = db
      .prepare("SELECT status FROM turns WHERE input LIKE 'hi %' ORDER BY created_at")
      .all() as { status: string }[];
    expect(turnRows.map((r) => r.status)).toEqual(Array.from({ length: turns }, () => "done"));
    const replies = db
      .prepare("SELECT count(*) AS n FROM messages WHERE role = 'assistant' AND content = 'hello'")
      .get() as { n: number };
    expect(replies.n).toBe(turns + 1);
    const usage = db.prepare("SELECT count(*) AS n FROM usage").get() as { n: number };
    expect(usage.n).toBe(turns + 1);
    const outbox = db.prepare("SELECT status FROM outbox").all() as { status: string }[];
    expect(outbox.map((r) => r.status)).toEqual(Array.from({ length: turns + 1 }, () => "delivered"));
  });
});
