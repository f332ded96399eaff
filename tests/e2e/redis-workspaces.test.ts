/**
 * Workspace pruning on Redis, through real `herald gateway` and `herald worker` processes whose workers
 * share one HERALD_HOME: a worker's housekeeping deletes workspaces unused past the retention, and a
 * worker starting beside another leaves alone the workspace the other's turn just used by the record of
 * that use (though the folder's own time says otherwise), and the background process the turn started
 * there runs on. (The heartbeat that keeps the record fresh while such a process runs beats every 5
 * minutes; tests/e2e/worker-workspace-housekeeping.test.ts runs it faster.)
 */
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clusterPerTest, lastUser } from "../helpers/cluster-per-test.js";
import { eventually } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";
import { processesWithArg, uniqueSleep } from "./exec-contract.js";

const DAY = 86_400_000;
const redis = redisPerFile();
const cluster = clusterPerTest(redis);

/** A workspace folder with a file, last used `days` ago (made before this process kept records). */
function workspace(root: string, name: string, days: number): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "notes.md"), "notes");
  const at = new Date(Date.now() - days * DAY);
  utimesSync(dir, at, at);
  return dir;
}

describe("workspace pruning on Redis", () => {
  it("workers sharing HERALD_HOME prune old workspaces and keep the one another worker's turn used", async () => {
    const { c, tg, model: llm } = await cluster.start({ startGateway: false });
    const marker = uniqueSleep();
    llm.setDefault((request) => {
      const text = lastUser(request.messages);
      const toolResults = request.messages.filter((m) => m.role === "tool");
      if (text === "start the job" && toolResults.length === 0)
        return {
          toolCalls: [{ name: "terminal", arguments: { command: `sleep ${marker}`, background: true } }],
        };
      return { text: toolResults.length ? "started it" : `echo: ${text}` };
    });
    await c.startGateway();
    const home = join(c.home, "shared-home");
    const root = join(home, "workspaces");
    const old = workspace(root, "telegram_dm_5-0123456789ab", 40);
    const recent = workspace(root, "telegram_dm_6-0123456789ab", 2);

    await c.startWorker("wa", 1, { home });
    await eventually(
      () => !existsSync(old),
      () => `worker A did not prune the old workspace:\n${c.output()}`,
    );
    expect(existsSync(join(recent, "notes.md"))).toBe(true);

    tg.userSends({ chatId: 111, fromId: 111, text: "start the job" });
    await eventually(
      () => tg.botMessages(111).some((m) => m.text === "started it"),
      () => `no answer:\n${c.output()}`,
    );
    expect(processesWithArg(marker).length).toBeGreaterThan(0);
    const used = readdirSync(root).filter((name) => !name.startsWith(".") && `${root}/${name}` !== recent);
    expect(used).toHaveLength(1);
    const busy = join(root, used[0] ?? "");
    writeFileSync(join(busy, "output.log"), "work in progress");
    // As `tar x` of an archive holding ./ leaves it: the folder's own time says 40 days. Worker A's
    // record of the turn's use is what B goes by.
    const longAgo = new Date(Date.now() - 40 * DAY);
    utimesSync(busy, longAgo, longAgo);
    // Worker B knows nothing of A's process; a second old workspace shows its first pass has run.
    const old2 = workspace(root, "telegram_dm_8-0123456789ab", 40);

    await c.startWorker("wb", 1, { home });
    await eventually(
      () => !existsSync(old2),
      () => `worker B did not prune the old workspace:\n${c.output()}`,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(join(busy, "output.log"))).toBe(true);
    expect(existsSync(join(recent, "notes.md"))).toBe(true);
    expect(processesWithArg(marker).length).toBeGreaterThan(0);
  }, 90_000);
});
