/**
 * Git's object format, written by this process: loose blobs, trees and commits under a repository's
 * `objects/`, so a snapshot needs no git process (`git` reads them back for diffs and restores). A
 * blob is streamed from an open file descriptor (hashed and deflated in one pass, bounded memory); an
 * object already present is not written again.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { access, mkdir, open, rename, unlink } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";

/** `node:zlib` (~1.4 MiB resident) loads with the first checkpoint, not with the tools. */
let zlibModule: typeof import("node:zlib") | undefined;
const zlib = () => (zlibModule ??= createRequire(import.meta.url)("node:zlib") as typeof import("node:zlib"));

/** A tree entry's mode as git writes it. */
export type EntryMode = "100644" | "100755" | "120000" | "40000";

/** Files this small are read whole; larger ones are streamed. */
const SMALL_BYTES = 1024 * 1024;

/** The path of object `oid` in the repository `gitDir`. */
function objectPath(gitDir: string, oid: string): string {
  return join(gitDir, "objects", oid.slice(0, 2), oid.slice(2));
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Moves a finished temporary object into place, unless another writer put it there first. */
async function install(gitDir: string, oid: string, tmp: string): Promise<void> {
  const target = objectPath(gitDir, oid);
  if (await exists(target)) return void (await unlink(tmp).catch(() => undefined));
  // `git prune`, run in the background, removes empty object folders: one made here may be gone again
  // before the rename, so a rename that finds no folder makes it again and retries.
  for (let attempt = 0; ; attempt++) {
    await mkdir(join(gitDir, "objects", oid.slice(0, 2)), { recursive: true, mode: 0o700 });
    try {
      return await rename(tmp, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 5) throw err;
    }
  }
}

function tempPath(gitDir: string): string {
  return join(gitDir, "objects", `tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
}

/** Writes an object held in memory; returns its id. */
export async function writeObject(
  gitDir: string,
  type: "blob" | "tree" | "commit",
  body: Buffer,
): Promise<string> {
  const header = Buffer.from(`${type} ${body.length}\0`);
  const whole = Buffer.concat([header, body]);
  const oid = createHash("sha1").update(whole).digest("hex");
  if (await exists(objectPath(gitDir, oid))) return oid;
  const tmp = tempPath(gitDir);
  try {
    const handle = await open(tmp, "wx", 0o600);
    await handle.writeFile(zlib().deflateSync(whole, { level: 1 }));
    await handle.close();
    await install(gitDir, oid, tmp);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  return oid;
}

/**
 * Writes the blob of an open regular file of `sizeBytes` bytes. Returns undefined when the file did not
 * hold exactly that many bytes (it changed while read): the caller skips it.
 */
export async function writeBlobFrom(
  gitDir: string,
  handle: FileHandle,
  sizeBytes: number,
): Promise<string | undefined> {
  if (sizeBytes <= SMALL_BYTES) {
    const buffer = Buffer.alloc(sizeBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, sizeBytes + 1, 0);
    if (bytesRead !== sizeBytes) return undefined;
    return writeObject(gitDir, "blob", buffer.subarray(0, sizeBytes));
  }
  const header = Buffer.from(`blob ${sizeBytes}\0`);
  const hash = createHash("sha1").update(header);
  const tmp = tempPath(gitDir);
  const out = await open(tmp, "wx", 0o600);
  let read = 0;
  try {
    const deflate = zlib().createDeflate({ level: 1 });
    const written = (async () => {
      for await (const chunk of deflate) await out.write(chunk as Buffer);
    })();
    deflate.write(header);
    for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) {
      const bytes = chunk as Buffer;
      read += bytes.length;
      if (read > sizeBytes) break;
      hash.update(bytes);
      if (!deflate.write(bytes)) await new Promise((resolve) => deflate.once("drain", resolve));
    }
    deflate.end();
    await written;
    await out.close();
    if (read !== sizeBytes) {
      await unlink(tmp);
      return undefined;
    }
    const oid = hash.digest("hex");
    await install(gitDir, oid, tmp);
    return oid;
  } catch (err) {
    await out.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** One entry of a tree being built: a file, a link, or a folder of entries. */
export interface TreeInput {
  readonly name: string;
  readonly mode: EntryMode;
  readonly oid: string;
}

/** Git orders a tree's entries by name, a folder's name as if it ended in `/`. */
function sortKey(entry: TreeInput): string {
  return entry.mode === "40000" ? `${entry.name}/` : entry.name;
}

/** The body of a tree object holding `entries`. */
export function treeBody(entries: readonly TreeInput[]): Buffer {
  const keyed = entries.map((entry) => ({ entry, key: Buffer.from(sortKey(entry)) }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  const parts: Buffer[] = [];
  for (const { entry: e } of keyed)
    parts.push(Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, "hex"));
  return Buffer.concat(parts);
}

/** The id of an object of `type` holding `body`. */
export function objectId(type: "blob" | "tree" | "commit", body: Buffer): string {
  return createHash("sha1").update(`${type} ${body.length}\0`).update(body).digest("hex");
}

/** Stores an object held in memory unless present (checked synchronously first); returns its id. */
export async function storeObject(
  gitDir: string,
  type: "blob" | "tree" | "commit",
  body: Buffer,
): Promise<string> {
  const oid = objectId(type, body);
  return existsSync(objectPath(gitDir, oid)) ? oid : writeObject(gitDir, type, body);
}

/** Writes a commit of `tree` (no parent: each checkpoint stands alone) with `message` at `atMs`. */
export function writeCommit(gitDir: string, tree: string, message: string, atMs: number): Promise<string> {
  const who = `Herald <herald@localhost> ${Math.floor(atMs / 1000)} +0000`;
  const body = `tree ${tree}\nauthor ${who}\ncommitter ${who}\n\n${message}\n`;
  return writeObject(gitDir, "commit", Buffer.from(body, "utf8"));
}

/** A stored commit's tree and message. */
export function readCommit(gitDir: string, oid: string): { tree: string; message: string } {
  const raw = zlib()
    .inflateSync(readFileSync(objectPath(gitDir, oid)))
    .toString("utf8");
  const body = raw.slice(raw.indexOf("\0") + 1);
  const split = body.indexOf("\n\n");
  const tree = /^tree ([0-9a-f]{40})$/m.exec(body.slice(0, split))?.[1];
  if (!tree) throw new Error(`checkpoint commit ${oid} has no tree`);
  return { tree, message: body.slice(split + 2).replace(/\n$/, "") };
}
