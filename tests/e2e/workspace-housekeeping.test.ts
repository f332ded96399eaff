/** Workspaces unused for the retention period are deleted by the gateway's housekeeping; recent ones stay. */
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("workspace housekeeping", () => {
  it("deletes a workspace unused for longer than exec.workspace_retention_days at start, and keeps a recent one", async () => {
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
    harness = await startHarness({ env: { HERALD_HOME: home, HERALD_EXEC_WORKSPACE_RETENTION_DAYS: "30" } });
    await vi.waitFor(() => expect(existsSync(old)).toBe(false), { timeout: 10_000 });
    expect(existsSync(join(recent, "notes.txt"))).toBe(true);
  });
});
