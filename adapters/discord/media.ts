/**
 * Inbound attachments: downloaded from Discord's CDN into the cache folder, capped at the media size
 * limit (the declared size is checked first, the bytes while streaming). What could not be downloaded is
 * described in a note for the model instead of failing the message.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Attachment, Message } from "discord.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment } from "../../core/types.js";
import {
  attachmentKindOf,
  FileTooLargeError,
  megabytes,
  safeFileName,
  writeCapped,
} from "../shared/media.js";

const VOICE_MESSAGE_FLAG = 1 << 13;

export interface DownloadOptions {
  cacheDir: string;
  maxBytes: number;
  logger: Logger;
  /** @defaultValue 60000 */
  timeoutMs?: number;
}

export interface DownloadResult {
  attachments: InboundAttachment[];
  /** Lines telling the model about files it did not get. */
  notes: string[];
}

function kindOf(att: Attachment, voice: boolean): InboundAttachment["kind"] {
  const type = att.contentType ?? "";
  if (voice && type.startsWith("audio/")) return "voice";
  return attachmentKindOf(type);
}

/** Streams `url` to `path`, failing once more than `maxBytes` arrived. Returns the byte count. */
async function download(url: string, path: string, maxBytes: number, timeoutMs: number): Promise<number> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok || !response.body) throw new Error(`CDN answered ${response.status}`);
  return writeCapped(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), path, maxBytes);
}

/** Downloads every attachment of `message`. Never throws: failures become notes. */
export async function downloadAttachments(
  message: Message,
  options: DownloadOptions,
): Promise<DownloadResult> {
  const result: DownloadResult = { attachments: [], notes: [] };
  if (message.attachments.size === 0) return result;
  const dir = join(options.cacheDir, "discord");
  await mkdir(dir, { recursive: true });
  const voice = (message.flags.bitfield & VOICE_MESSAGE_FLAG) !== 0;
  let index = 0;
  for (const att of message.attachments.values()) {
    const name = att.name || "file";
    const limit = `larger than the ${megabytes(options.maxBytes)} limit`;
    if (att.size > options.maxBytes) {
      options.logger.warn({ messageId: message.id, sizeBytes: att.size }, "discord attachment over size cap");
      result.notes.push(`[attachment ${name} (${megabytes(att.size)}) not received: ${limit}]`);
      continue;
    }
    const path = join(dir, `${message.id}-${index++}-${safeFileName(name)}`);
    try {
      const sizeBytes = await download(att.url, path, options.maxBytes, options.timeoutMs ?? 60_000);
      result.attachments.push({
        kind: kindOf(att, voice),
        path,
        fileName: name,
        mimeType: att.contentType?.split(";")[0]?.trim() || undefined,
        sizeBytes,
      });
    } catch (err) {
      const tooLarge = err instanceof FileTooLargeError;
      options.logger.warn(
        { messageId: message.id, err: tooLarge ? "too large" : String(err) },
        "discord attachment download failed",
      );
      result.notes.push(`[attachment ${name} not received: ${tooLarge ? limit : "download failed"}]`);
    }
  }
  return result;
}
