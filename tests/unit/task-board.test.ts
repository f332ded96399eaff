/**
 * The task board on a real `state.db`: claims in order, a claim held until its lease runs out or its
 * turn dies (the journal says cancelled), completion only by the holder, and `herald tasks`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerTaskBoardCommands as registerTasksCommands } from "../../app/cli/task-board.js";
import { loadConfig } from "../../app/config.js";
import { SqliteState } from "../../sessions/sqlite-state.js";
import { SqliteTaskBoard } from "../../sessions/sqlite-task-board.js";

let home: string;
let state: SqliteState;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "herald-board-"));
  state = SqliteState.open(join(home, "state.db"));
});
afterEach(() => {
  if (state.isOpen) state.close();
  rmSync(home, { recursive: true, force: true });
  process.exitCode = undefined;
});

const a = { owner: "agent-a", turnId: "ta" };
const b = { owner: "agent-b", turnId: "tb" };

describe("SqliteTaskBoard", () => {
  it("claims the oldest free task, never one that is held, and lets only the holder complete it", () => {
    const board = new SqliteTaskBoard(state.database, { claimTtlMs: 1_000 });
    board.create("first", "do it", { owner: "cron" }, 0);
    board.create("second", undefined, { owner: "cron" }, 0);
    expect(board.claim(a, undefined, 10)?.title).toBe("first");
    expect(board.claim(b, undefined, 10)?.title).toBe("second");
    expect(board.claim(b, undefined, 10)).toBeUndefined();
    expect(board.claim(b, 1, 10)).toBeUndefined();
    expect(() => board.complete(1, "done", "by b", b, 20)).toThrow(/claimed by agent-a/);
    expect(board.complete(1, "done", "shipped", a, 20)).toMatchObject({ state: "done", result: "shipped" });
    expect(() => board.complete(1, "done", "again", a, 30)).toThrow(/done already/);
    expect(board.list({ state: "claimed" }).map((t) => t.id)).toEqual([2]);
  });

  it("a claim lapses when its lease runs out (renewed while its turn uses the board)", () => {
    const board = new SqliteTaskBoard(state.database, { claimTtlMs: 1_000 });
    board.create("only", undefined, { owner: "cron" }, 0);
    expect(board.claim(a, undefined, 0)?.id).toBe(1);
    // a lists at 900: the claim is renewed to 1,900.
    board.update(1, { result: "half way" }, a, 900);
    expect(board.claim(b, undefined, 1_500)).toBeUndefined();
    expect(board.claim(b, undefined, 2_000)).toMatchObject({ id: 1, owner: "agent-b", result: "half way" });
  });

  it("a claim of a cancelled or failed turn is free at once; release gives back a dead turn's claims", () => {
    const board = new SqliteTaskBoard(state.database, { claimTtlMs: 60_000 });
    board.create("one", undefined, { owner: "cron" });
    board.create("two", undefined, { owner: "cron" });
    const turn = {
      id: "tdead",
      sessionId: "s1",
      sessionKey: "api:dm:x",
      chat: { platform: "api", chatId: "x" },
      userId: "u",
      source: "chat" as const,
      input: "claim",
    };
    state.turns.create(turn, Date.now());
    expect(board.claim({ owner: "dead", turnId: "tdead" })?.id).toBe(1);
    expect(board.claim(b)?.id).toBe(2);
    expect(board.claim(a)).toBeUndefined();
    state.turns.finish("tdead", "cancelled", "stopped", Date.now());
    expect(board.claim(a)?.id).toBe(1);
    expect(board.release("tb")).toBe(1);
    expect(board.get(2)).toMatchObject({ state: "todo" });
  });
});

describe("herald tasks", () => {
  async function herald(...args: string[]): Promise<{ out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command().exitOverride();
    registerTasksCommands(program, {
      config: () => loadConfig({ env: { HERALD_HOME: home } }),
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    await program.parseAsync(["tasks", ...args], { from: "user" });
    return { out: out.join(""), err: err.join("") };
  }

  it("adds, lists and shows tasks; a bad state names the choices", async () => {
    state.close();
    expect((await herald("list")).out).toContain("The board is empty");
    expect((await herald("add", "water the plants", "--details", "the ferns too")).out).toBe("1\n");
    expect((await herald("list")).out).toBe("#1 [todo] water the plants\n");
    const shown = (await herald("show", "1")).out;
    expect(shown).toContain("details: the ferns too");
    expect(shown).toContain("by cli");
    expect((await herald("list", "--state", "open")).err).toContain(
      "--state must be one of todo, claimed, done, failed",
    );
    expect(process.exitCode).toBe(1);
    process.exitCode = undefined;
    expect((await herald("show", "7")).err).toContain("There is no task '7'");
  });
});
