import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { remoteWorkdir } from "../../exec/paths.js";
import { resolveInside, WorkspaceManager, workspaceDirName } from "../../exec/workspaces.js";

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "herald-wsm-")));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("workspaceDirName", () => {
  it("makes safe, distinct names from chat keys with ':' and '@'", () => {
    const a = workspaceDirName("matrix:@alice:example.org");
    const b = workspaceDirName("matrix:@alice_example.org");
    expect(a).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(a).not.toBe(b);
    expect(workspaceDirName("../../etc")).toMatch(/^etc-[0-9a-f]{12}$/);
    expect(workspaceDirName("")).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe("resolveInside", () => {
  let ws: string;
  beforeEach(() => {
    ws = join(root, "ws");
    mkdirSync(join(ws, "src"), { recursive: true });
  });

  it("resolves relative paths, and absolute paths inside the workspace", () => {
    expect(resolveInside(ws, "src/a.ts")).toBe(join(ws, "src", "a.ts"));
    expect(resolveInside(ws, join(ws, "src"))).toBe(join(ws, "src"));
    expect(resolveInside(ws, "src/../b.txt")).toBe(join(ws, "b.txt"));
    expect(resolveInside(ws, "new/dir/file.txt")).toBe(join(ws, "new", "dir", "file.txt"));
  });

  it("maps the sandbox's /workspace onto the workspace", () => {
    expect(resolveInside(ws, "/workspace/src", { virtualRoot: "/workspace" })).toBe(join(ws, "src"));
    expect(() => resolveInside(ws, "/workspace-evil/x", { virtualRoot: "/workspace" })).toThrow(/outside/);
  });

  it("refuses .. and absolute paths outside", () => {
    expect(() => resolveInside(ws, "../x")).toThrow(/outside the workspace/);
    expect(() => resolveInside(ws, "src/../../x")).toThrow(/outside the workspace/);
    expect(() => resolveInside(ws, "/etc/passwd")).toThrow(/outside the workspace/);
  });

  it("refuses a symlink that escapes (ln -s /etc link; link/passwd), even for files not yet there", () => {
    symlinkSync("/etc", join(ws, "link"));
    expect(() => resolveInside(ws, "link/passwd")).toThrow(/outside the workspace/);
    expect(() => resolveInside(ws, "link/not-there/new.txt")).toThrow(/outside the workspace/);
    symlinkSync(join(ws, "src"), join(ws, "inner"));
    expect(resolveInside(ws, "inner/a.ts")).toBe(join(ws, "src", "a.ts"));
  });

  it("carries the code invalid_input", () => {
    expect(() => resolveInside(ws, "../x")).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });
});

describe("remoteWorkdir", () => {
  it("joins inside the remote root and refuses escapes lexically", () => {
    expect(remoteWorkdir("/srv/ws", undefined)).toBe("/srv/ws");
    expect(remoteWorkdir("/srv/ws", "a/b")).toBe("/srv/ws/a/b");
    expect(remoteWorkdir("/srv/ws", "/srv/ws/a")).toBe("/srv/ws/a");
    expect(remoteWorkdir("/srv/ws", "..foo")).toBe("/srv/ws/..foo");
    expect(() => remoteWorkdir("/srv/ws", "../x")).toThrow(/outside/);
    expect(() => remoteWorkdir("/srv/ws", "/etc")).toThrow(/outside/);
  });
});

describe("WorkspaceManager", () => {
  it("gives one workspace per session, or per user when configured", async () => {
    const perSession = new WorkspaceManager({ rootDir: root });
    const a = await perSession.ensure({ sessionKey: "telegram:1:a", userKey: "telegram:u1" });
    const b = await perSession.ensure({ sessionKey: "telegram:1:b", userKey: "telegram:u1" });
    expect(a.dir).not.toBe(b.dir);
    expect(existsSync(a.dir)).toBe(true);
    const perUser = new WorkspaceManager({ rootDir: root, scope: "user" });
    expect(perUser.workspaceFor({ sessionKey: "x", userKey: "telegram:u1" }).dir).toBe(
      perUser.workspaceFor({ sessionKey: "y", userKey: "telegram:u1" }).dir,
    );
  });

  it("prunes old workspaces but skips busy ones and recent ones", async () => {
    const manager = new WorkspaceManager({ rootDir: root });
    const old = await manager.ensure({ sessionKey: "old" });
    const busy = await manager.ensure({ sessionKey: "busy" });
    const recent = await manager.ensure({ sessionKey: "recent" });
    const longAgo = new Date(Date.now() - 10 * 24 * 3600 * 1000);
    utimesSync(old.dir, longAgo, longAgo);
    utimesSync(busy.dir, longAgo, longAgo);
    const deleted = await manager.prune(24 * 3600 * 1000, (dir) => dir === busy.dir);
    expect(deleted).toEqual([old.dir]);
    expect(existsSync(old.dir)).toBe(false);
    expect(existsSync(busy.dir)).toBe(true);
    expect(existsSync(recent.dir)).toBe(true);
  });
});
