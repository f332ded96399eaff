/**
 * The checkpoint store on a real shadow git repository: a checkpoint only when something changed,
 * the count and size bounds, diffs between trees, and restores that bring back deleted and overwritten
 * files, remove new ones, keep links as links and never write through a link out of the workspace.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkpointsOff,
  checkpointsSectionSchema,
  DEFAULT_CHECKPOINT_LIMITS,
  ShadowCheckpointStore,
} from "../../agent/tools/checkpoints/index.js";

let root: string;
let ws: string;
let gitDir: string;
let clock: number;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "herald-ckpt-"));
  ws = join(root, "ws");
  gitDir = join(root, "shadow");
  mkdirSync(ws);
  clock = 1_700_000_000_000;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function store(limits: Partial<typeof DEFAULT_CHECKPOINT_LIMITS> = {}) {
  return new ShadowCheckpointStore({
    workspaceDir: ws,
    gitDir,
    limits: { ...DEFAULT_CHECKPOINT_LIMITS, ...limits },
    now: () => (clock += 1000),
  });
}

const refCount = () => readdirSync(join(gitDir, "refs", "checkpoints")).length;

describe("checkpoint store", () => {
  it("starts a new repository when its own was deleted under it (the workspace was pruned)", async () => {
    const s = store();
    writeFileSync(join(ws, "a.txt"), "one\n");
    expect((await s.snapshot("before")).kind).toBe("taken");
    rmSync(gitDir, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "one\n");
    expect((await s.snapshot("after")).kind).toBe("taken");
    expect(s.list().map((c) => c.label)).toEqual(["after"]);
    writeFileSync(join(ws, "a.txt"), "two\n");
    expect((await s.diff(1, 10_000)).patch).toContain("+two");
  });

  it("takes a checkpoint only when the workspace changed, and lists them newest first", async () => {
    const s = store();
    writeFileSync(join(ws, "a.txt"), "one\n");
    expect((await s.snapshot("first turn\nmore text")).kind).toBe("taken");
    const objects = () => readdirSync(join(gitDir, "objects"), { recursive: true }).length;
    const stored = objects();
    expect((await s.snapshot("second turn")).kind).toBe("unchanged");
    expect(refCount()).toBe(1);
    expect(objects()).toBe(stored); // nothing written
    writeFileSync(join(ws, "a.txt"), "two\n");
    expect((await s.snapshot("third turn")).kind).toBe("taken");
    const list = s.list();
    expect(list.map((c) => [c.n, c.label])).toEqual([
      [1, "third turn"],
      [2, "first turn"],
    ]);
    // A fresh store (another process) sees the same and finds nothing new either.
    expect((await store().snapshot("again")).kind).toBe("unchanged");
  });

  it("keeps at most maxCount checkpoints", async () => {
    const s = store({ maxCount: 3 });
    for (let i = 1; i <= 5; i++) {
      writeFileSync(join(ws, "f.txt"), `v${i}`);
      await s.snapshot(`turn ${i}`);
    }
    expect(s.list().map((c) => c.label)).toEqual(["turn 5", "turn 4", "turn 3"]);
  });

  it("leaves big files out, and refuses a workspace over the total or the file count", async () => {
    writeFileSync(join(ws, "big.bin"), Buffer.alloc(2000, 1));
    writeFileSync(join(ws, "small.txt"), "x");
    const taken = await store({ maxFileBytes: 1000 }).snapshot("t");
    expect(taken).toMatchObject({ kind: "taken", skipped: ["big.bin"], skippedCount: 1 });
    expect(await store({ maxTotalBytes: 1500 }).snapshot("t")).toMatchObject({
      kind: "too-large",
      reason: expect.stringContaining("more than 1500 bytes"),
    });
    expect(await store({ maxFiles: 1 }).snapshot("t")).toMatchObject({ kind: "too-large" });
  });

  it("restores deleted, overwritten and created files, and saves the state it replaced", async () => {
    const s = store();
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src", "keep.txt"), "original\n");
    writeFileSync(join(ws, "gone.txt"), "precious\n");
    writeFileSync(join(ws, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    await s.snapshot("make files");
    const untouched = lstatSync(join(ws, "run.sh"), { bigint: true });
    writeFileSync(join(ws, "src", "keep.txt"), "changed\n");
    rmSync(join(ws, "gone.txt"));
    mkdirSync(join(ws, "new"));
    writeFileSync(join(ws, "new", "junk.txt"), "junk");

    const diff = await s.diff(1, 10_000);
    expect(diff.stat).toMatch(/gone\.txt/);
    expect(diff.stat).toMatch(/src\/keep\.txt/);
    expect(diff.patch).toContain("-original");
    expect(diff.patch).toContain("+changed");
    expect(diff.cut).toBe(false);
    expect((await s.diff(1, 20)).cut).toBe(true);

    const outcome = await s.restore(1);
    expect(outcome.saved?.label).toBe("before /rollback 1");
    expect(outcome.restored.n).toBe(2);
    expect(readFileSync(join(ws, "src", "keep.txt"), "utf8")).toBe("original\n");
    expect(readFileSync(join(ws, "gone.txt"), "utf8")).toBe("precious\n");
    expect(existsSync(join(ws, "new"))).toBe(false);
    expect(lstatSync(join(ws, "run.sh")).mode & 0o111).not.toBe(0);
    // A file the rollback did not need to change is left alone (same inode, same time).
    const after = lstatSync(join(ws, "run.sh"), { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([untouched.ino, untouched.mtimeNs]);
    // The rollback itself can be undone.
    await s.restore(1);
    expect(readFileSync(join(ws, "new", "junk.txt"), "utf8")).toBe("junk");
    expect(existsSync(join(ws, "gone.txt"))).toBe(false);
  });

  it("stores links as links and never writes through one out of the workspace", async () => {
    const outside = join(root, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "host secret\n");
    const s = store();
    mkdirSync(join(ws, "docs"));
    writeFileSync(join(ws, "docs", "readme.md"), "workspace readme\n");
    symlinkSync(join(outside, "secret.txt"), join(ws, "link"));
    await s.snapshot("with a link");
    const tree = execFileSync("git", ["ls-tree", "-r", s.list()[0]!.tree], {
      env: { GIT_DIR: gitDir, PATH: process.env["PATH"] },
    }).toString();
    expect(tree).toMatch(/^120000 blob \w+\tlink$/m);
    expect(tree).not.toContain("secret");

    // The agent swaps docs/ for a link to a host folder and deletes its link.
    rmSync(join(ws, "docs"), { recursive: true });
    symlinkSync(outside, join(ws, "docs"));
    rmSync(join(ws, "link"));
    await s.restore(1);
    expect(lstatSync(join(ws, "docs")).isDirectory()).toBe(true);
    expect(readFileSync(join(ws, "docs", "readme.md"), "utf8")).toBe("workspace readme\n");
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(readlinkSync(join(ws, "link"))).toBe(join(outside, "secret.txt"));
  });

  it("a rollback neither deletes nor restores a file too big to checkpoint", async () => {
    const s = store({ maxFileBytes: 1000 });
    writeFileSync(join(ws, "a.txt"), "a");
    await s.snapshot("t1");
    writeFileSync(join(ws, "huge.bin"), Buffer.alloc(5000, 2));
    writeFileSync(join(ws, "a.txt"), "b");
    await s.restore(1);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("a");
    expect(lstatSync(join(ws, "huge.bin")).size).toBe(5000);
  });

  it("a workspace's .gitattributes does not change restored bytes", async () => {
    const s = store();
    writeFileSync(join(ws, ".gitattributes"), "* text eol=crlf\n");
    writeFileSync(join(ws, "unix.txt"), "a\nb\n");
    await s.snapshot("t");
    writeFileSync(join(ws, "unix.txt"), "changed");
    await s.restore(1);
    expect(readFileSync(join(ws, "unix.txt"), "utf8")).toBe("a\nb\n");
  });
});

describe("where checkpoints work", () => {
  it("only on a workspace on this host, and only when enabled", () => {
    const on = checkpointsSectionSchema.parse({});
    expect(checkpointsOff(on, "sandbox")).toBeUndefined();
    expect(checkpointsOff(on, "local")).toBeUndefined();
    expect(checkpointsOff(on, "ssh")).toMatch(
      /need a workspace on this host .*the ssh backend keeps it elsewhere/,
    );
    expect(checkpointsOff(on, "docker")).toMatch(/the docker backend/);
    expect(checkpointsOff({ ...on, enabled: false }, "sandbox")).toMatch(/checkpoints\.enabled: false/);
  });
});
