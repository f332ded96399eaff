import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { remoteWorkdir } from "../../agent/exec/paths.js";
import { resolveInside, WorkspaceManager, workspaceDirName } from "../../agent/exec/workspaces.js";

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
    ageWorkspace(manager, old.dir, 10);
    ageWorkspace(manager, busy.dir, 10);
    const deleted = await manager.prune(DAY, (dir) => dir === busy.dir);
    expect(deleted).toEqual([old.dir]);
    expect(existsSync(old.dir)).toBe(false);
    expect(existsSync(manager.usedMarker(old.dir))).toBe(false);
    expect(existsSync(busy.dir)).toBe(true);
    expect(existsSync(recent.dir)).toBe(true);
  });

  it("records a use outside the workspace, where commands run in it cannot see or change it", async () => {
    const manager = new WorkspaceManager({ rootDir: root });
    const ws = await manager.ensure({ sessionKey: "telegram:dm:1" });
    expect(readdirSync(ws.dir)).toEqual([]);
    expect(existsSync(manager.usedMarker(ws.dir))).toBe(true);
    expect(manager.usedMarker(ws.dir).startsWith(`${ws.dir}/`)).toBe(false);
  });

  it("keeps a workspace used today though a command set its folder's time years back (tar x of ./)", async () => {
    const manager = new WorkspaceManager({ rootDir: root });
    const source = mkdtempSync(join(tmpdir(), "herald-src-"));
    writeFileSync(join(source, "data.csv"), "a,b\n");
    utimesSync(source, new Date("2020-01-01"), new Date("2020-01-01"));
    const archive = `${source}.tar`;
    execFileSync("tar", ["cf", archive, "-C", source, "."]);
    try {
      const ws = await manager.ensure({ sessionKey: "telegram:dm:1" });
      execFileSync("tar", ["xf", archive], { cwd: ws.dir });
      // The folder now says 2020: by its time alone it would go at the next pass.
      expect(statSync(ws.dir).mtime.getUTCFullYear()).toBe(2020);
      expect(await manager.prune(30 * DAY, () => false)).toEqual([]);
      expect(existsSync(join(ws.dir, "data.csv"))).toBe(true);
    } finally {
      rmSync(source, { recursive: true, force: true });
      rmSync(archive, { force: true });
    }
  });

  it("takes the folder's time for a workspace without a record (made before records existed)", async () => {
    const manager = new WorkspaceManager({ rootDir: root });
    const legacy = join(root, "legacy-session");
    const fresh = join(root, "fresh-session");
    mkdirSync(legacy);
    mkdirSync(fresh);
    utimesSync(legacy, new Date(Date.now() - 40 * DAY), new Date(Date.now() - 40 * DAY));
    expect(await manager.prune(30 * DAY, () => false)).toEqual([legacy]);
    expect(existsSync(fresh)).toBe(true);
  });

  it("never prunes a symbolic link in the root, nor what it points to", async () => {
    const manager = new WorkspaceManager({ rootDir: root });
    const outside = mkdtempSync(join(tmpdir(), "herald-outside-"));
    try {
      writeFileSync(join(outside, "keep.txt"), "x");
      utimesSync(outside, new Date(Date.now() - 40 * DAY), new Date(Date.now() - 40 * DAY));
      symlinkSync(outside, join(root, "linked"));
      expect(await manager.prune(DAY, () => false)).toEqual([]);
      expect(existsSync(join(root, "linked", "keep.txt"))).toBe(true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("removes what a pass that died left in the trash, and records whose workspace is gone", async () => {
    const manager = new WorkspaceManager({ rootDir: root });
    const leftover = join(root, ".trash", `${Date.now() - 2 * 3_600_000}-abcd1234-old`);
    const inProgress = join(root, ".trash", `${Date.now()}-dcba4321-other`);
    for (const dir of [leftover, inProgress]) {
      mkdirSync(join(dir, "deep"), { recursive: true });
      writeFileSync(join(dir, "deep", "f.txt"), "x");
    }
    const ws = await manager.ensure({ sessionKey: "gone" });
    rmSync(ws.dir, { recursive: true });
    ageWorkspace(manager, ws.dir, 40);
    const kept = await manager.ensure({ sessionKey: "kept" });
    await manager.prune(30 * DAY, () => false);
    expect(existsSync(leftover)).toBe(false);
    // Another pass may still be removing this one.
    expect(existsSync(inProgress)).toBe(true);
    expect(existsSync(manager.usedMarker(ws.dir))).toBe(false);
    expect(existsSync(manager.usedMarker(kept.dir))).toBe(true);
  });
});

const DAY = 86_400_000;

/** Sets the workspace's record of its last use, and its folder's time, `days` back. */
function ageWorkspace(manager: WorkspaceManager, dir: string, days: number): void {
  const at = new Date(Date.now() - days * DAY);
  if (existsSync(dir)) utimesSync(dir, at, at);
  utimesSync(manager.usedMarker(dir), at, at);
}
