/**
 * Blobs on the wire: a plain tar whose every entry is a regular file named by the SHA-256 of its
 * content. Unpacking trusts nothing: an entry of another type (a link, a device, a folder), a name that
 * is not a hash (`../x`, `/etc/passwd`), content whose hash differs from its name, an entry over
 * `maxBlobBytes` or a stream over `maxTotalBytes` or `maxEntries` refuses the whole archive with
 * `invalid_input`, naming the entry. Nothing unpacked is ever written under the entry's name: the
 * receiver stores it by the verified hash, and where a blob lands in a workspace is the manifest's
 * business (checked on its own, check.ts).
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { HeraldError } from "../../../core/errors.js";
import type { BlobSource } from "./types.js";

/** Caps of {@link unpackBlobs}. */
export interface BlobArchiveLimits {
  readonly maxBlobBytes: number;
  readonly maxTotalBytes: number;
  /** @defaultValue 200_000 */
  readonly maxEntries?: number | undefined;
}

const HASH = /^[0-9a-f]{64}$/;

function refused(message: string): HeraldError {
  return new HeraldError(`blob archive refused: ${message}`, { code: "invalid_input" });
}

/** A tar stream of `blobs`, each read when the stream reaches it (one blob in memory at a time). */
export function packBlobs(blobs: readonly BlobSource[]): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    const { pack: tarPack } = await import("tar-stream");
    const pack = tarPack();
    const feeding = (async () => {
      for (const blob of blobs) {
        const data = await blob.read();
        await new Promise<void>((resolve, reject) =>
          pack.entry(
            { name: blob.sha256, size: data.length, mode: 0o600, mtime: new Date(0) },
            data,
            (err) => (err ? reject(err) : resolve()),
          ),
        );
      }
      pack.finalize();
    })().catch((err: unknown) => pack.destroy(err as Error));
    for await (const chunk of pack) yield chunk as Buffer;
    await feeding;
  }
  return Readable.from(generate());
}

/**
 * Reads a tar of blobs from `input`, calling `onBlob` with each verified blob in order; see the module
 * comment. Resolves with the number of blobs.
 * @throws HeraldError `invalid_input` for a hostile or malformed archive; what `onBlob` throws.
 */
export async function unpackBlobs(
  input: AsyncIterable<Uint8Array> | Readable,
  limits: BlobArchiveLimits,
  onBlob: (sha256: string, data: Buffer) => Promise<void>,
): Promise<number> {
  const { extract: tarExtract } = await import("tar-stream");
  const extract = tarExtract();
  const source = input instanceof Readable ? input : Readable.from(input);
  const feeding = pipeline(source, extract);
  const maxEntries = limits.maxEntries ?? 200_000;
  let entries = 0;
  let total = 0;
  try {
    for await (const entry of extract) {
      const { header } = entry;
      const name = JSON.stringify(String(header.name).slice(0, 200));
      if (++entries > maxEntries) throw refused(`over ${maxEntries} entries`);
      if (header.type !== "file") throw refused(`the entry ${name} is a ${header.type}, not a file`);
      if (!HASH.test(header.name)) throw refused(`the entry ${name} is not named by a SHA-256`);
      const size = header.size ?? 0;
      if (size > limits.maxBlobBytes) throw refused(`the entry ${name} is over ${limits.maxBlobBytes} bytes`);
      total += size;
      if (total > limits.maxTotalBytes) throw refused(`the archive is over ${limits.maxTotalBytes} bytes`);
      const chunks: Buffer[] = [];
      const hash = createHash("sha256");
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        hash.update(chunk);
        chunks.push(chunk);
      }
      if (hash.digest("hex") !== header.name) throw refused(`the content of ${name} does not match its hash`);
      await onBlob(header.name, Buffer.concat(chunks));
    }
    await feeding;
  } catch (err) {
    extract.destroy();
    await feeding.catch(() => undefined);
    if (err instanceof HeraldError) throw err;
    throw refused(`not a readable tar: ${(err as Error).message}`);
  }
  return entries;
}
