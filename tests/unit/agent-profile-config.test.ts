/**
 * An agent's own skills folder, exec backend and workspace root as the configuration reads them: the
 * defaults (the shared skills folder, `exec.backend`, `agents/<name>/workspaces`), relative paths under
 * HERALD_HOME, and bad entries refused with a ConfigError naming the key and the fix.
 */
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ownerOf, WorkspaceManager, workspaceRoots } from "../../agent/exec/index.js";
import { agentProfiles } from "../../app/agents.js";
import { configHome } from "../helpers/config-home.js";

const { load, configError, homeDir } = configHome("herald-agent-profile-");

const agent = (...lines: string[]) =>
  ["agents:", "  - name: family", ...lines.map((l) => `    ${l}`)].join("\n");

describe("an agent's skills folder, exec backend and workspace root", () => {
  it("defaults to the shared skills folder, exec.backend and agents/<name>/workspaces", () => {
    const config = load(agent(), { HERALD_EXEC_BACKEND: "docker" });
    const family = agentProfiles(config).get("family");
    expect(family?.skillsDir).toBe(join(homeDir(), "skills"));
    expect(family?.execBackend).toBe("docker");
    expect(family?.workspaceRoot).toBe(join(homeDir(), "agents", "family", "workspaces"));
    // The default agent's workspaces stay where they were.
    expect(workspaceRoots(config).rootDir).toBe(join(homeDir(), "workspaces"));
  });

  it("reads its own, relative paths under HERALD_HOME", () => {
    const config = load(
      agent("skills_dir: family-skills", "exec_backend: local", "workspace_root: /srv/fam-ws"),
    );
    const family = agentProfiles(config).get("family");
    expect(family?.skillsDir).toBe(join(homeDir(), "family-skills"));
    expect(family?.execBackend).toBe("local");
    expect(family?.workspaceRoot).toBe("/srv/fam-ws");
    expect(config.exec.backend).toBe("sandbox");
  });

  it("keeps each agent's workspaces under its root, per user too", () => {
    const config = load(agent(), {});
    const manager = new WorkspaceManager({ ...workspaceRoots(config), scope: "user" });
    const chat = { platform: "telegram", chatId: "1" };
    const mine = manager.workspaceFor(ownerOf({ sessionKey: "telegram:dm:1", chat, userId: "1" }));
    const theirs = manager.workspaceFor(ownerOf({ sessionKey: "family/telegram:dm:1", chat, userId: "1" }));
    expect(mine.dir.startsWith(join(homeDir(), "workspaces"))).toBe(true);
    expect(theirs.dir.startsWith(join(homeDir(), "agents", "family", "workspaces"))).toBe(true);
    expect(theirs.key).toBe("family/telegram:user:1");
  });

  it("prunes old workspaces under every agent's root and records use beside each", async () => {
    const config = load(agent(), {});
    const manager = new WorkspaceManager(workspaceRoots(config));
    const chat = { platform: "telegram", chatId: "1" };
    const theirs = await manager.ensure(ownerOf({ sessionKey: "family/telegram:dm:1", chat, userId: "1" }));
    const mine = await manager.ensure(ownerOf({ sessionKey: "telegram:dm:1", chat, userId: "1" }));
    expect(
      existsSync(join(homeDir(), "agents", "family", "workspaces", ".last-used", basename(theirs.dir))),
    ).toBe(true);
    // Used now: kept; a year on: both deleted, each from its own root.
    expect(await manager.prune(86_400_000, () => false)).toEqual([]);
    const later = Date.now() + 365 * 86_400_000;
    const pruned = await manager.prune(86_400_000, () => false, { now: later });
    expect(pruned.sort()).toEqual([mine.dir, theirs.dir].sort());
    expect(existsSync(theirs.dir)).toBe(false);
  });

  it("refuses a bad backend, one the exec section cannot build, and a workspace root that holds state", () => {
    const bad = configError(agent("exec_backend: podman"));
    expect(bad.key).toBe("agents.0.exec_backend");
    expect(bad.message).toMatch(/agents\.0\.exec_backend is invalid.*Fix/);

    const ssh = configError(agent("exec_backend: ssh"));
    expect(ssh.key).toBe("agents.0.exec_backend");
    expect(ssh.message).toMatch(/exec\.ssh is missing.*Fix: add those settings to exec:/);

    const home = configError(agent("workspace_root: ."));
    expect(home.key).toBe("agents.0.workspace_root");
    expect(home.message).toMatch(/holds HERALD_HOME.*Fix: give the agent a folder of its own/);

    const nested = configError(agent("workspace_root: workspaces/family"));
    expect(nested.key).toBe("agents.0.workspace_root");
    expect(nested.message).toMatch(/inside another agent's workspace root/);

    const skills = configError(agent("skills_dir: fam/skills", "workspace_root: fam"));
    expect(skills.key).toBe("agents.0.workspace_root");
    expect(skills.message).toMatch(/holds a memory or skills folder/);

    const reachable = configError(agent("skills_dir: workspaces/skills"));
    expect(reachable.key).toBe("agents.0.skills_dir");
    expect(reachable.message).toMatch(/inside a workspace root.*Fix: give it a folder apart/);
  });

  it("refuses a key-less API server when an agent's sandbox has the network", () => {
    const err = configError(agent("exec_backend: sandbox"), {
      HERALD_EXEC_BACKEND: "local",
      HERALD_EXEC_NETWORK: "true",
    });
    expect(err.key).toBe("API_SERVER_KEY");
  });
});
