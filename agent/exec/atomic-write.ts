import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Writes `data` to `abs` atomically: a temporary file in the same directory (so the rename stays on one
 * file system) is written, flushed and renamed over the target. Readers see the old content or the new,
 * never a half-written file; on failure the temporary file is removed and the target is untouched.
 * @param data the content, whole or as chunks (streamed, never held whole).
 * @param mode permissions for the file (keep the old file's when replacing). @defaultValue 0o666 & ~umask
 * @returns the bytes written.
 */
export async function writeFileAtomic(
  abs: string,
  data: string | Uint8Array | AsyncIterable<Uint8Array>,
  mode?: number,
): Promise<number> {
  const tmp = join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await open(tmp, "wx", mode ?? 0o666);
  let written = 0;
  try {
    try {
      if (typeof data === "string" || data instanceof Uint8Array) {
        const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
        await handle.writeFile(bytes);
        written = bytes.byteLength;
      } else {
        for await (const chunk of data) {
          await handle.write(chunk);
          written += chunk.byteLength;
        }
      }
      if (mode !== undefined) await handle.chmod(mode);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, abs);
    return written;
  } catch (err) {
    await unlink(tmp).catch(() => {
      // Already gone (the rename may have happened); the original error is what matters.
    });
    throw err;
  }
}
