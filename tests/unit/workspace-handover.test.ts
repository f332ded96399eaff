/**
 * The workspace hand-over without HTTP: hostile archives and manifests refused, and two workers'
 * copies of one workspace (two roots, the local backend) kept equal through one gateway store
 * (`WorkspaceHub` on an in-memory state.db): files, edits, deletions, folders, links, modes, and two
 * workers committing on one generation merged path by path.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pack as tarPack } from "tar-stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkManifest,
  type HandoverRemote,
  type Manifest,
  packBlobs,
  unpackBlobs,
  WorkspaceHandover,
  WorkspaceHub,
} from "../../agent/exec/handover/index.js";
import { LocalBackend, WorkspaceManager } from "../../agent/exec/index.js";
import { SqliteState, SqliteWorkspaceGenerations } from "../../sessions/index.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const limits = { maxBlobBytes: 1024, maxTotalBytes: 4096 };

/** A tar with the given raw entries, as a hostile sender would make it. */
async function hostileTar(
  entries: {
    name: string;
    type?: "file" | "symlink" | "link" | "directory";
    body?: string;
    linkname?: string;
  }[],
): Promise<Buffer> {
  const pack = tarPack();
  for (const e of entries) {
    if (e.type === "symlink" || e.type === "link")
      pack.entry({ name: e.name, type: e.type, linkname: e.linkname ?? "/etc/passwd" });
    else if (e.type === "directory") pack.entry({ name: e.name, type: "directory" });
    else pack.entry({ name: e.name }, e.body ?? "");
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function unpack(tar: Buffer): Promise<string[]> {
  const got: string[] = [];
  await unpackBlobs(Readable.from([tar]), limits, async (name) => {
    got.push(name);
  });
  return got;
}

describe("blob archives", () => {
  it("accepts blobs named by the hash of their content", async () => {
    const tar = await hostileTar([{ name: sha("hello"), body: "hello" }]);
    expect(await unpack(tar)).toEqual([sha("hello")]);
  });

  it.each([
    ["a name with ..", [{ name: "../../etc/passwd", body: "x" }], /not named by a SHA-256/],
    ["an absolute name", [{ name: "/etc/passwd", body: "x" }], /not named by a SHA-256/],
    ["a symbolic link", [{ name: sha("x"), type: "symlink" as const }], /is a symlink, not a file/],
    ["a hard link", [{ name: sha("x"), type: "link" as const }], /is a link, not a file/],
    ["a folder", [{ name: "dir", type: "directory" as const }], /is a directory, not a file/],
    ["content that is not its name's", [{ name: sha("hello"), body: "evil" }], /does not match its hash/],
    ["a blob over the cap", [{ name: sha("x".repeat(2000)), body: "x".repeat(2000) }], /over 1024 bytes/],
  ])("refuses %s", async (_what, entries, message) => {
    const tar = await hostileTar(entries);
    await expect(unpack(tar)).rejects.toThrow(message);
  });

  it("refuses an archive over its total cap and one that is not a tar", async () => {
    const bodies = ["a", "b", "c", "d", "e"].map((c) => c.repeat(1000));
    await expect(unpack(await hostileTar(bodies.map((b) => ({ name: sha(b), body: b }))))).rejects.toThrow(
      /over 4096 bytes/,
    );
    await expect(unpack(Buffer.from("this is no tar at all".repeat(40)))).rejects.toThrow(
      /blob archive refused/,
    );
  });
});

describe("manifests", () => {
  const file = { kind: "file" as const, sha256: sha("x"), sizeBytes: 1, mode: 0o644 };
  it.each([
    ["..", { "../outside": file }, /leaves the workspace/],
    ["a nested ..", { "a/../../b": file }, /leaves the workspace/],
    ["an absolute path", { "/etc/passwd": file }, /is absolute/],
    ["a link out", { l: { kind: "link" as const, target: "../../etc" } }, /points outside the workspace/],
    ["an absolute link", { l: { kind: "link" as const, target: "/etc/passwd" } }, /absolute/],
    ["a path below a link", { l: { kind: "link" as const, target: "d" }, "l/x": file }, /below the link/],
    ["an empty segment", { "a//b": file }, /not in normal form/],
  ])("refuses %s", (_what, manifest, message) => {
    expect(() => checkManifest(manifest as Manifest, { maxBytes: 1000 })).toThrow(message);
  });

  it("refuses more bytes than the quota and accepts links that stay inside", () => {
    expect(() => checkManifest({ big: { ...file, sizeBytes: 2000 } }, { maxBytes: 1000 })).toThrow(/quota/);
    const ok = {
      d: { kind: "dir" as const, mode: 0o755 },
      "d/l": { kind: "link" as const, target: "../f" },
      f: file,
    };
    expect(checkManifest(ok, { maxBytes: 1000 })).toBe(1);
  });
});

describe("two workers, one gateway store", () => {
  let home: string;
  let state: SqliteState;
  let hub: WorkspaceHub;
  const backend = new LocalBackend();
  const owner = { sessionKey: "telegram:dm:42" };

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "herald-handover-"));
    state = SqliteState.open(":memory:");
    hub = new WorkspaceHub({
      dir: join(home, "gateway", "workspace-store"),
      generations: new SqliteWorkspaceGenerations<Manifest>(state.database),
      quotaBytes: 1024 * 1024,
    });
  });
  afterEach(() => {
    state.close();
    rmSync(home, { recursive: true, force: true });
  });

  const remote = (): HandoverRemote => ({
    head: async (w, have) => hub.head(w, have),
    missing: (s) => hub.missing(s),
    upload: async (blobs) => {
      await hub.receive(packBlobs(blobs), 1024 * 1024);
    },
    download: async (shas, onBlob) => {
      await unpackBlobs(
        packBlobs(await hub.sources(shas)),
        { maxBlobBytes: 1 << 20, maxTotalBytes: 1 << 21 },
        onBlob,
      );
    },
    commit: (w, base, changes, worker) => hub.commit(w, base, changes, worker),
  });

  function worker(name: string) {
    const manager = new WorkspaceManager({ rootDir: join(home, name, "workspaces") });
    const handover = new WorkspaceHandover({ remote: remote(), backend, worker: name, quotaBytes: 1 << 20 });
    return {
      async turn(work: (dir: string) => void) {
        const ws = await manager.ensure(owner);
        await handover.pull(ws);
        work(ws.dir);
        return handover.push(ws);
      },
      dir: () => manager.workspaceFor(owner).dir,
    };
  }

  it("carries files, folders, links and modes over, and then edits and deletions", async () => {
    const a = worker("a");
    const b = worker("b");
    const pushed = await a.turn((dir) => {
      writeFileSync(join(dir, "notes.md"), "turn one");
      mkdirSync(join(dir, "src/empty"), { recursive: true });
      writeFileSync(join(dir, "src/run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
      symlinkSync("src/run.sh", join(dir, "run"));
      symlinkSync("/etc/passwd", join(dir, "escape"));
    });
    expect(pushed).toMatchObject({ generation: 1, files: 2, skipped: ["escape"] });

    await b.turn((dir) => {
      expect(readFileSync(join(dir, "notes.md"), "utf8")).toBe("turn one");
      expect(statSync(join(dir, "src/run.sh")).mode & 0o777).toBe(0o755);
      expect(existsSync(join(dir, "src/empty"))).toBe(true);
      expect(readlinkSync(join(dir, "run"))).toBe("src/run.sh");
      expect(existsSync(join(dir, "escape"))).toBe(false);
      writeFileSync(join(dir, "notes.md"), "turn two");
      rmSync(join(dir, "src"), { recursive: true });
    });

    await a.turn((dir) => {
      expect(readFileSync(join(dir, "notes.md"), "utf8")).toBe("turn two");
      expect(existsSync(join(dir, "src"))).toBe(false);
      expect(lstatSync(join(dir, "escape")).isSymbolicLink()).toBe(true); // A's own, never carried
    });
  });

  it("a worker that holds the latest generation moves nothing, and an unchanged turn pushes nothing", async () => {
    const a = worker("a");
    await a.turn((dir) => writeFileSync(join(dir, "x"), "1"));
    const again = await a.turn(() => undefined);
    expect(again).toMatchObject({ generation: undefined, files: 0 });
    // A new worker pulls once; a session that never used its workspace makes nothing here.
    const handover = new WorkspaceHandover({ remote: remote(), backend, worker: "c", quotaBytes: 1 << 20 });
    const fresh = new WorkspaceManager({ rootDir: join(home, "c", "workspaces") }).workspaceFor(owner);
    expect(await handover.pull(fresh)).toMatchObject({ pulled: true, generation: 1, files: 1 });
    handover.release(fresh);
    expect(await handover.pull(fresh)).toMatchObject({ pulled: false, generation: 1 });
    handover.release(fresh);
    const other = new WorkspaceManager({ rootDir: join(home, "c", "workspaces") }).workspaceFor({
      sessionKey: "x",
    });
    expect(await handover.pull(other)).toMatchObject({ pulled: false, generation: 0 });
    expect(existsSync(other.dir)).toBe(false);
  });

  it("merges two workers' commits on one generation path by path", async () => {
    const a = worker("a");
    const b = worker("b");
    await a.turn((dir) => writeFileSync(join(dir, "shared.txt"), "base"));
    await b.turn(() => undefined);
    // Both hold generation 1 and change different files at once (a parent and its child).
    const wsA = a.dir();
    const wsB = b.dir();
    writeFileSync(join(wsA, "from-a.txt"), "A");
    writeFileSync(join(wsB, "from-b.txt"), "B");
    const [pa, pb] = await Promise.all([a.turn(() => undefined), b.turn(() => undefined)]);
    expect([pa?.generation, pb?.generation].sort()).toEqual([2, 3]);
    await a.turn((dir) => {
      expect(readFileSync(join(dir, "from-b.txt"), "utf8")).toBe("B");
      expect(readFileSync(join(dir, "shared.txt"), "utf8")).toBe("base");
    });
    await b.turn((dir) => expect(readFileSync(join(dir, "from-a.txt"), "utf8")).toBe("A"));
  });
});
