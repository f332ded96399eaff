/**
 * A pruned workspace takes its checkpoints with it: two API sessions each write a file (a checkpoint
 * is taken before), one workspace is then left unused past `exec.workspace_retention_days`, and the
 * restarted gateway's housekeeping deletes it and its repository under HERALD_HOME/checkpoints/, and
 * keeps the other workspace's.
 */
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

it("deletes the checkpoints of a workspace housekeeping pruned, and keeps another workspace's", async () => {
  harness = await startHarness({
    env: { HERALD_EXEC_BACKEND: "local", HERALD_EXEC_WORKSPACE_RETENTION_DAYS: "30" },
  });
  const h = harness;
  const write = async (sessionId: string) => {
    h.llm.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: `${sessionId}\n` } }] },
      { text: "written" },
    );
    expect((await chat(h, `write notes for ${sessionId}`, { sessionId })).text).toBe("written");
  };
  await write("old-one");
  const checkpoints = join(h.homeDir, "checkpoints");
  const root = join(h.homeDir, "workspaces");
  const [old] = readdirSync(checkpoints);
  expect(old).toBeDefined();
  await write("recent-one");
  const recent = readdirSync(checkpoints).find((name) => name !== old);
  expect(recent).toBeDefined();
  expect(readdirSync(join(checkpoints, old!, "refs", "checkpoints"))).toHaveLength(1);

  // The old one was last used forty days ago, by its folder's time and by the record of its use.
  const fortyDaysAgo = new Date(Date.now() - 40 * 86_400_000);
  utimesSync(join(root, old!), fortyDaysAgo, fortyDaysAgo);
  utimesSync(join(root, ".last-used", old!), fortyDaysAgo, fortyDaysAgo);
  await h.restart();

  await vi.waitFor(() => expect(existsSync(join(root, old!))).toBe(false), { timeout: 10_000 });
  await vi.waitFor(() => expect(existsSync(join(checkpoints, old!))).toBe(false), { timeout: 10_000 });
  expect(readdirSync(join(checkpoints, recent!, "refs", "checkpoints"))).toHaveLength(1);
  expect(existsSync(join(root, recent!, "notes.txt"))).toBe(true);

  // The session comes back: a new workspace, and a new repository for its checkpoints.
  await write("old-one");
  expect(readdirSync(join(checkpoints, old!, "refs", "checkpoints"))).toHaveLength(1);
});
