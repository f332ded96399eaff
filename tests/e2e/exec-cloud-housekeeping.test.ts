/**
 * Housekeeping and cloud sandboxes: a workspace pruned for age has its sandbox deleted at the provider
 * (Daytona's SDK against the fake), and a fresh one keeps its sandbox.
 */
import { mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { createDaytonaDriver } from "../../agent/exec/cloud-daytona.js";
import { readSandboxRecord } from "../../agent/exec/cloud-records.js";
import { runHousekeeping, workspaceHousekeeping } from "../../agent/exec/housekeeping.js";
import { WorkspaceManager } from "../../agent/exec/workspaces.js";
import { silentLogger } from "../../core/logger.js";
import { startFakeDaytona } from "../fakes/daytona/index.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";

let fake: RunningFake & { apiUrl: string };
beforeAll(async () => {
  fake = await startFakeDaytona({ apiKey: "dtn_hk" });
});
afterAll(async () => {
  await fake?.stop();
});

describe("pruning workspaces on a cloud backend", () => {
  it("deletes the sandbox of a workspace pruned for age, and keeps a fresh one's", async () => {
    const root = mkdtempSync(join(tmpdir(), "herald-cloud-hk-"));
    const remote = mkdtempSync(join(tmpdir(), "herald-cloud-hk-remote-"));
    const workspaces = new WorkspaceManager({ rootDir: root });
    const backend = new CloudBackend({
      provider: "daytona",
      workdir: join(remote, "{workspace}"),
      driver: () => createDaytonaDriver({ apiKey: "dtn_hk", apiUrl: fake.apiUrl, idleStopMs: 60_000 }),
    });
    try {
      const old = await workspaces.ensure({ sessionKey: "telegram:dm:old" });
      const fresh = await workspaces.ensure({ sessionKey: "telegram:dm:fresh" });
      await backend.prepare(old);
      await backend.prepare(fresh);
      const oldId = (await readSandboxRecord(old.dir))!.id;
      const freshId = (await readSandboxRecord(fresh.dir))!.id;
      const longAgo = new Date(Date.now() - 40 * 86_400_000);
      utimesSync(old.dir, longAgo, longAgo);
      utimesSync(workspaces.usedMarker(old.dir), longAgo, longAgo);
      const report = await runHousekeeping({
        cacheDir: join(root, "cache"),
        mediaRetentionMs: 86_400_000,
        workspaces: workspaceHousekeeping(
          { exec: { workspaceRetentionDays: 30 } },
          { workspaces, processes: undefined, backend },
        ),
        logger: silentLogger(),
      });
      expect(report.workspaces).toBe(1);
      expect(fake.host.find(oldId)).toBeUndefined();
      expect(await readSandboxRecord(old.dir)).toBeUndefined();
      expect(fake.host.find(freshId)?.state).toBe("running");
    } finally {
      await backend.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(remote, { recursive: true, force: true });
    }
  }, 30_000);
});
