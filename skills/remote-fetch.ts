/**
 * Bringing a remote skill onto this machine, into a temporary folder: a shallow `git clone` (no hooks,
 * no submodules, no prompts) and its commit, or an archive's bytes unpacked entry by entry with every
 * entry checked before it is written: a name that leaves the folder (absolute, `..`), a link (symbolic
 * or hard), a device, an entry over the size cap or too many entries refuse the whole archive.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type yauzl from "yauzl";

/** Caps of an unpacked archive. */
export interface ArchiveLimits {
  /** Largest entry, bytes. @defaultValue 1 MiB */
  maxEntryBytes?: number;
  /** All entries together, bytes. @defaultValue 20 MiB */
  maxTotalBytes?: number;
  /** @defaultValue 1000 */
  maxEntries?: number;
}

/** Why an archive or repository was refused. */
export class SkillFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SkillFetchError";
  }
}

function git(args: string[], cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never", ...args],
      {
        cwd,
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          GIT_TERMINAL_PROMPT: "0",
          HOME: process.env["HOME"] ?? "/",
        },
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
        reject(
          new SkillFetchError(
            missing
              ? "git is not installed: apt-get install git"
              : `git ${args[0]} failed: ${stderr.trim() || err.message}`,
          ),
        );
      },
    );
  });
}

/** Clones `url` (at `ref`) shallowly into `dir` and resolves with the commit checked out. */
export async function cloneSkillRepo(url: string, ref: string | undefined, dir: string): Promise<string> {
  await git([
    "clone",
    "--depth",
    "1",
    "--no-tags",
    "--no-recurse-submodules",
    ...(ref ? ["--branch", ref] : []),
    "--",
    url,
    dir,
  ]);
  return (await git(["rev-parse", "HEAD"], dir)).trim();
}

/** `git diff --no-index` of two folders (the update's preview); empty when they are the same. */
export async function diffFolders(before: string, after: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["diff", "--no-index", "--no-color", "--", before, after],
      { maxBuffer: 16 * 1024 * 1024, env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } },
      (err, stdout, stderr) => {
        // Exit code 1: the folders differ.
        if (err && (err as { code?: number }).code !== 1)
          return reject(new SkillFetchError(stderr || err.message));
        resolve(stdout.split(before).join("a").split(after).join("b"));
      },
    );
  });
}

/** SHA-256 of `bytes`, hex: the pin of an archive. */
export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** An entry name as a safe relative path, or a refusal. */
function safeName(name: string): string {
  const clean = name.replace(/^\.\//, "");
  if (
    !clean ||
    clean.includes("\0") ||
    clean.includes("\\") ||
    clean.startsWith("/") ||
    /^[A-Za-z]:/.test(clean)
  )
    throw new SkillFetchError(
      `the archive entry ${JSON.stringify(name)} has an absolute or unsafe name: refused`,
    );
  if (clean.split("/").some((p) => p === ".."))
    throw new SkillFetchError(`the archive entry ${JSON.stringify(name)} leaves the folder (..): refused`);
  return clean;
}

/** Counts the bytes of each entry and of the whole, refusing past the caps. */
function counter(name: string, limits: Required<ArchiveLimits>, total: { bytes: number }): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      total.bytes += chunk.length;
      if (bytes > limits.maxEntryBytes)
        return done(new SkillFetchError(`${name} is over ${limits.maxEntryBytes} bytes: refused`));
      if (total.bytes > limits.maxTotalBytes)
        return done(
          new SkillFetchError(`the archive unpacks to over ${limits.maxTotalBytes} bytes: refused`),
        );
      done(null, chunk);
    },
  });
}

async function writeEntry(
  dir: string,
  name: string,
  source: NodeJS.ReadableStream | AsyncIterable<Buffer>,
  mode: number,
  meter: Transform,
) {
  const path = join(dir, name);
  await mkdir(dirname(path), { recursive: true });
  await pipeline(source, meter, createWriteStream(path, { flags: "wx", mode: mode & 0o755 }));
}

function limitsOf(limits: ArchiveLimits): Required<ArchiveLimits> {
  return {
    maxEntryBytes: limits.maxEntryBytes ?? 1024 * 1024,
    maxTotalBytes: limits.maxTotalBytes ?? 20 * 1024 * 1024,
    maxEntries: limits.maxEntries ?? 1000,
  };
}

/** Unpacks a `.tar.gz` into `dir` (which exists and is empty); see the module comment. */
export async function unpackTarGz(bytes: Uint8Array, dir: string, limits: ArchiveLimits = {}): Promise<void> {
  const caps = limitsOf(limits);
  const total = { bytes: 0 };
  // The archive libraries load with the first install from an archive, not with the gateway.
  const { extract: tarExtract } = await import("tar-stream");
  const extract = tarExtract();
  // A server that sent it with Content-Encoding: gzip had it unpacked on the way: plain tar then.
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const input = Readable.from([Buffer.from(bytes)]);
  // `node:zlib` loads with the first gzipped download, not with the skills.
  const feeding = gzipped
    ? pipeline(input, (await import("node:zlib")).createGunzip(), extract)
    : pipeline(input, extract);
  let entries = 0;
  try {
    for await (const entry of extract) {
      const { header } = entry;
      if (++entries > caps.maxEntries)
        throw new SkillFetchError(`the archive has over ${caps.maxEntries} entries: refused`);
      const name = safeName(header.name);
      if (header.type === "directory") {
        await mkdir(join(dir, name), { recursive: true });
        entry.resume();
      } else if (header.type === "file" || header.type === "contiguous-file") {
        await writeEntry(
          dir,
          name,
          entry as unknown as AsyncIterable<Buffer>,
          header.mode ?? 0o644,
          counter(name, caps, total),
        );
      } else throw new SkillFetchError(`the archive entry ${name} is a ${header.type}, not a file: refused`);
    }
    await feeding;
  } catch (err) {
    extract.destroy();
    await feeding.catch(() => undefined);
    throw err instanceof SkillFetchError
      ? err
      : new SkillFetchError(`the archive is not a readable .tar.gz: ${(err as Error).message}`);
  }
}

/** Unpacks a `.zip` into `dir` (which exists and is empty); see the module comment. */
export async function unpackZip(bytes: Uint8Array, dir: string, limits: ArchiveLimits = {}): Promise<void> {
  const caps = limitsOf(limits);
  const total = { bytes: 0 };
  const { default: unzip } = await import("yauzl");
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      unzip.fromBuffer(Buffer.from(bytes), { lazyEntries: true, validateEntrySizes: true }, (err, z) =>
        err || !z ? reject(err) : resolve(z),
      ),
    );
  } catch (err) {
    throw new SkillFetchError(`the archive is not a readable .zip: ${(err as Error).message}`);
  }
  if (zip.entryCount > caps.maxEntries)
    throw new SkillFetchError(`the archive has over ${caps.maxEntries} entries: refused`);
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", (err: Error) =>
        reject(
          err instanceof SkillFetchError
            ? err
            : new SkillFetchError(`the archive is not a readable .zip: ${err.message}`),
        ),
      );
      zip.on("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        void zipEntry(zip, entry, dir, caps, total).then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

async function zipEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  dir: string,
  caps: Required<ArchiveLimits>,
  total: { bytes: number },
): Promise<void> {
  const name = safeName(entry.fileName);
  const mode = (entry.externalFileAttributes >>> 16) & 0o177777;
  const type = mode & 0o170000;
  if (name.endsWith("/")) {
    await mkdir(join(dir, name), { recursive: true });
    return;
  }
  if (type !== 0 && type !== 0o100000)
    throw new SkillFetchError(
      `the archive entry ${name} is ${type === 0o120000 ? "a symbolic link" : "not a file"}: refused`,
    );
  if (entry.uncompressedSize > caps.maxEntryBytes)
    throw new SkillFetchError(`${name} is over ${caps.maxEntryBytes} bytes: refused`);
  const stream = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err || !s ? reject(err) : resolve(s))),
  );
  await writeEntry(dir, name, stream, mode & 0o777 ? mode : 0o644, counter(name, caps, total));
}
