/**
 * Workspaces unused for the retention period are deleted by the embedded gateway's housekeeping; recent
 * ones stay, by the record of their last use where there is one, else by the folder's own time.
 */
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WorkspaceManager } from "../../agent/exec/workspaces.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("workspace housekeeping", () => {
  it("deletes a workspace unused for longer than exec.workspace_retention_days at start, and keeps recent ones", async () => {
    const home = mkdtempSync(join(tmpdir(), "herald-ws-home-"));
    const root = join(home, "workspaces");
    const old = join(root, "old-session");
    const recent = join(root, "recent-session");
    for (const dir of [old, recent]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "notes.txt"), "x");
    }
    const fortyDaysAgo = new Date(Date.now() - 40 * 86_400_000);
    utimesSync(old, fortyDaysAgo, fortyDaysAgo);
    // Used today by the record of its last use, though a command (tar x of ./) set its folder's time back.
    const extracted = join(root, "extracted-session");
    mkdirSync(extracted);
    writeFileSync(join(extracted, "data.csv"), "a,b");
    await new WorkspaceManager({ rootDir: root }).markUsed(extracted);
    utimesSync(extracted, fortyDaysAgo, fortyDaysAgo);
    harness = await startHarness({ env: { HERALD_HOME: home, HERALD_EXEC_WORKSPACE_RETENTION_DAYS: "30" } });
    await vi.waitFor(() => expect(existsSync(old)).toBe(false), { timeout: 10_000 });
    // The pass may not have reached the others yet.
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(recent, "notes.txt"))).toBe(true);
    expect(existsSync(join(extracted, "data.csv"))).toBe(true);
  });
});
