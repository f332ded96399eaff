/**
 * The cloud backends' configuration: keys from the environment by their documented names, a missing
 * key named with its variable, the per-provider workdirs, and `/usage`'s sandbox line from a record.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutionBackend, parseExecOptions } from "../../agent/exec/backend.js";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { writeSandboxRecord } from "../../agent/exec/cloud-records.js";
import { sandboxUsage } from "../../agent/exec/cloud-usage.js";
import { workspaceDirName } from "../../agent/exec/workspaces.js";
import { loadConfig } from "../../app/config.js";

const dirs: string[] = [];
const home = () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-cloud-cfg-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("cloud backend settings", () => {
  it("reads each provider's keys from its documented environment names", () => {
    const config = loadConfig({
      env: {
        HERALD_HOME: home(),
        HERALD_EXEC_BACKEND: "vercel",
        HERALD_EXEC_IDLE_STOP_S: "120",
        DAYTONA_API_KEY: "dtn",
        DAYTONA_API_URL: "http://127.0.0.1:9/api",
        E2B_API_KEY: "e2b",
        E2B_DOMAIN: "e2b.example",
        MODAL_TOKEN_ID: "ak",
        MODAL_TOKEN_SECRET: "as",
        VERCEL_TOKEN: "vt",
        VERCEL_TEAM_ID: "team_1",
        VERCEL_PROJECT_ID: "prj_1",
      },
    });
    expect(config.exec.backend).toBe("vercel");
    expect(config.exec.cloud.idleStopS).toBe(120);
    expect(config.exec.daytona).toMatchObject({ apiKey: "dtn", apiUrl: "http://127.0.0.1:9/api" });
    expect(config.exec.e2b).toMatchObject({ apiKey: "e2b", domain: "e2b.example" });
    expect(config.exec.modal).toMatchObject({ tokenId: "ak", tokenSecret: "as" });
    expect(config.exec.vercel).toMatchObject({ token: "vt", teamId: "team_1", projectId: "prj_1" });
  });

  it("a missing key is named with its variable, and the fix", () => {
    expect(() => parseExecOptions({ backend: "daytona" })).toThrow(
      /exec\.daytona\.api_key is not set: set DAYTONA_API_KEY/,
    );
    expect(() => parseExecOptions({ backend: "vercel", vercel: { token: "t", projectId: "p" } })).toThrow(
      /VERCEL_TEAM_ID/,
    );
    expect(() => parseExecOptions({ backend: "modal", modal: { tokenId: "a" } })).toThrow(
      /MODAL_TOKEN_SECRET/,
    );
    expect(() => parseExecOptions({ backend: "e2b", cloud: { idleStopS: 1 } })).toThrow(
      /exec\.cloud\.idleStopS.*at least 10/,
    );
  });

  it("builds a CloudBackend per provider, with the provider's workspace folder, and touches no network", () => {
    const cases = [
      ["daytona", { daytona: { apiKey: "k" } }, "/home/daytona/workspace"],
      ["e2b", { e2b: { apiKey: "k" } }, "/home/user/workspace"],
      ["modal", { modal: { tokenId: "a", tokenSecret: "b" } }, "/workspace"],
      ["vercel", { vercel: { token: "t", teamId: "x", projectId: "p" } }, "/vercel/sandbox/workspace"],
    ] as const;
    for (const [backend, keys, root] of cases) {
      const built = createExecutionBackend({ backend, ...keys });
      expect(built).toBeInstanceOf(CloudBackend);
      expect(built.name).toBe(backend);
      expect((built as CloudBackend).fixedRoot()).toBe(root);
    }
  });

  it("/usage: the sandbox's hours, and the cost at the configured price", async () => {
    const homeDir = home();
    const dir = join(homeDir, "workspaces", workspaceDirName("telegram:dm:42"));
    const usage = sandboxUsage({
      homeDir,
      agents: [],
      exec: { backend: "daytona", daytona: { costPerHour: 0.1 } },
    });
    expect(usage?.("telegram:dm:42")).toBeUndefined();
    await writeSandboxRecord(dir, { provider: "daytona", id: "sb-1", createdAt: 0, runningMs: 90 * 60_000 });
    expect(usage?.("telegram:dm:42")).toBe(
      "• daytona sandbox (paused now): 1.50 h running — $0.15 at $0.1/h",
    );
    const unpriced = sandboxUsage({ homeDir, agents: [], exec: { backend: "daytona" } });
    expect(unpriced?.("telegram:dm:42")).toMatch(/no price configured \(exec\.daytona\.cost_per_hour\)/);
    expect(sandboxUsage({ homeDir, agents: [], exec: { backend: "sandbox" } })).toBeUndefined();
  });
});
