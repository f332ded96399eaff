/**
 * What the adapters share when they save inbound files into the cache folder: a size-capped write of a
 * download stream, safe file names, the attachment kind from a MIME type, and sizes for the notes that
 * tell the agent about a file it did not get. Fetching stays in each adapter (tokens, hosts and retries
 * are the platform's business).
 */
import { createWriteStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import { basename } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { HeraldError, PlatformError } from "../../core/errors.js";
import { type InboundAttachment, MAX_OUTBOUND_FILE_BYTES } from "../../core/types.js";

/** A file passed the media size cap (`maxBytes`) while it was being saved. */
export class FileTooLargeError extends HeraldError {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`The file is larger than the ${maxBytes}-byte media limit (media.maxBytes in config.yaml).`, {
      code: "invalid_input",
    });
    this.name = "FileTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/**
 * The bytes of a file to send, read whole (as an upload needs them) but never past `maxBytes`: a larger
 * file, or one that grew since `send_message` measured it, fails its delivery for good instead of
 * taking that much memory at every retry.
 * @throws PlatformError (not retryable) naming the file and the limit; the read's error otherwise.
 */
export async function readOutboundFile(
  platform: string,
  path: string,
  maxBytes: number = MAX_OUTBOUND_FILE_BYTES,
): Promise<Buffer<ArrayBuffer>> {
  const handle = await open(path, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) {
        const bytes = Buffer.alloc(total);
        let at = 0;
        for (const chunk of chunks) at += chunk.copy(bytes, at);
        return bytes;
      }
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes)
        throw new PlatformError(
          platform,
          `${basename(path)} is over the ${megabytes(maxBytes)} Herald sends; it was not sent`,
          { retryable: false },
        );
    }
  } finally {
    await handle.close();
  }
}

/**
 * Streams `source` into the file `path`, failing with `FileTooLargeError` as soon as more than
 * `maxBytes` went through. On any failure (too large, the source or the disk failing) the partial file
 * is removed and the error is rethrown. Resolves to the number of bytes written.
 * @param options.mode file mode of a new file @defaultValue 0o666 (less the umask)
 */
export async function writeCapped(
  source: Readable,
  path: string,
  maxBytes: number,
  options: { mode?: number } = {},
): Promise<number> {
  let size = 0;
  const capped = async function* (chunks: AsyncIterable<Uint8Array>) {
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > maxBytes) throw new FileTooLargeError(maxBytes);
      yield chunk;
    }
  };
  try {
    await pipeline(source, capped, createWriteStream(path, options));
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
  return size;
}

/**
 * `name` made safe as (the end of) a file name in the cache: runs of anything but letters, digits,
 * `_`, `.` and `-` become `_`, and only the last `maxChars` characters are kept; "file" when nothing
 * is left.
 */
export function safeFileName(name: string, maxChars = 100): string {
  return name.replace(/[^\w.-]+/g, "_").slice(-maxChars) || "file";
}

/** The attachment kind a MIME type suggests: image, audio or video by its top-level type, else document. */
export function attachmentKindOf(mimeType: string | undefined): InboundAttachment["kind"] {
  if (!mimeType) return "document";
  if (mimeType.startsWith("image/")) return "image";
  if (mimeType.startsWith("audio/")) return "audio";
  if (mimeType.startsWith("video/")) return "video";
  return "document";
}

/** A size in megabytes with one decimal, as the notes to the agent show it ("1.5 MB", "0.0 MB"). */
export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
