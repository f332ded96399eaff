/**
 * Files in and out. Inbound photos, documents, voice notes, audio and video are downloaded into
 * `HERALD_HOME/cache/telegram` (capped at `media.maxBytes`) and handed to the gateway as attachments;
 * what cannot be fetched becomes a note in the text so the agent can tell the user. Outbound files go as
 * a photo when Telegram will show them as one, else as a document.
 */
import { copyFile, mkdir, rename, rm, stat, utimes } from "node:fs/promises";
import { extname, isAbsolute, join } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment, OutboundFile } from "../../core/types.js";
import { FileTooLargeError, writeCapped } from "../shared/media.js";
import type { TelegramFileRef, TelegramMessage } from "./parse.js";

export interface MediaContext {
  /** `getFile`: where the Bot API keeps the file (relative path, or absolute on a local Bot API server). */
  getFile(fileId: string): Promise<{ file_path?: string | undefined; file_size?: number | undefined }>;
  /** Download URL of a relative `file_path` (contains the token: never logged). */
  fileUrl(filePath: string): string;
  cacheDir: string;
  maxBytes: number;
  logger: Logger;
  /** @defaultValue 60_000 */
  downloadTimeoutMs?: number;
}

interface Candidate {
  ref: TelegramFileRef;
  kind: InboundAttachment["kind"];
  fileName: string;
  mimeType?: string | undefined;
}

const IMAGE_MIME = /^image\/(jpeg|png|webp|gif)$/;

function candidates(message: TelegramMessage, maxBytes: number): Candidate[] {
  const out: Candidate[] = [];
  if (message.photo && message.photo.length > 0) {
    // Sizes come smallest first; take the largest that fits the cap (or the smallest, to report it).
    const fitting = message.photo.filter((p) => (p.file_size ?? 0) <= maxBytes);
    const best = fitting[fitting.length - 1] ?? message.photo[0]!;
    out.push({
      ref: best,
      kind: "image",
      fileName: `photo-${best.file_unique_id}.jpg`,
      mimeType: "image/jpeg",
    });
  }
  const doc = message.document;
  if (doc) {
    const kind = IMAGE_MIME.test(doc.mime_type ?? "") ? "image" : "document";
    out.push({
      ref: doc,
      kind,
      fileName: doc.file_name ?? `document-${doc.file_unique_id}`,
      mimeType: doc.mime_type,
    });
  }
  if (message.voice) {
    const v = message.voice;
    out.push({
      ref: v,
      kind: "voice",
      fileName: `voice-${v.file_unique_id}.ogg`,
      mimeType: v.mime_type ?? "audio/ogg",
    });
  }
  if (message.audio) {
    const a = message.audio;
    out.push({
      ref: a,
      kind: "audio",
      fileName: a.file_name ?? `audio-${a.file_unique_id}.mp3`,
      mimeType: a.mime_type,
    });
  }
  if (message.video) {
    const v = message.video;
    out.push({
      ref: v,
      kind: "video",
      fileName: v.file_name ?? `video-${v.file_unique_id}.mp4`,
      mimeType: v.mime_type,
    });
  }
  return out;
}

/** "20 MB", "1.5 MB", "300 KB", "900 bytes". */
function mb(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** Streams `url` into `dest` (through `dest.part`), failing as soon as it exceeds `maxBytes`. */
async function download(url: string, dest: string, maxBytes: number, timeoutMs: number): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok || !res.body) throw new Error(`download answered HTTP ${res.status}`);
  const tmp = `${dest}.part`;
  const size = await writeCapped(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), tmp, maxBytes);
  try {
    await rename(tmp, dest);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return size;
}

/** Fetches one file into the cache; returns its size. Reuses an earlier download of the same file. */
async function fetchInto(c: Candidate, dest: string, ctx: MediaContext): Promise<number> {
  const existing = await stat(dest).catch(() => undefined);
  if (existing && (c.ref.file_size === undefined || existing.size === c.ref.file_size)) {
    // Used again now: the cache's housekeeping judges a file by its modification time (a failed touch
    // only makes it look as old as it is).
    const now = new Date();
    await utimes(dest, now, now).catch(() => undefined);
    return existing.size;
  }
  const info = await ctx.getFile(c.ref.file_id);
  if (!info.file_path) throw new Error("getFile returned no file_path");
  if ((info.file_size ?? 0) > ctx.maxBytes) throw new FileTooLargeError(ctx.maxBytes);
  if (isAbsolute(info.file_path)) {
    // A local Bot API server (--local) answers with a path on this machine.
    const { size } = await stat(info.file_path);
    if (size > ctx.maxBytes) throw new FileTooLargeError(ctx.maxBytes);
    await copyFile(info.file_path, dest);
    return size;
  }
  return download(ctx.fileUrl(info.file_path), dest, ctx.maxBytes, ctx.downloadTimeoutMs ?? 60_000);
}

/**
 * Downloads a message's files. Never throws: a file over the cap or failing to download becomes a note
 * ("[not downloaded: ...]") for the text.
 */
export async function downloadAttachments(
  message: TelegramMessage,
  ctx: MediaContext,
): Promise<{ attachments: InboundAttachment[]; notes: string[] }> {
  const attachments: InboundAttachment[] = [];
  const notes: string[] = [];
  const list = candidates(message, ctx.maxBytes);
  if (list.length === 0) return { attachments, notes };
  const dir = join(ctx.cacheDir, "telegram");
  await mkdir(dir, { recursive: true });
  for (const c of list) {
    const declared = c.ref.file_size;
    if (declared !== undefined && declared > ctx.maxBytes) {
      notes.push(
        `[attachment not downloaded: ${c.fileName} is ${mb(declared)}, over the ${mb(ctx.maxBytes)} limit]`,
      );
      continue;
    }
    const ext = extname(c.fileName) || "";
    const dest = join(dir, `${c.ref.file_unique_id}${ext}`.replace(/[^\w.-]/g, "_"));
    try {
      const sizeBytes = await fetchInto(c, dest, ctx);
      attachments.push({ kind: c.kind, path: dest, fileName: c.fileName, mimeType: c.mimeType, sizeBytes });
    } catch (err) {
      if (err instanceof FileTooLargeError) {
        notes.push(`[attachment not downloaded: ${c.fileName} is over the ${mb(ctx.maxBytes)} limit]`);
        continue;
      }
      ctx.logger.warn(
        { fileName: c.fileName, kind: c.kind, error: describeError(err) },
        "telegram attachment download failed",
      );
      notes.push(`[attachment could not be downloaded: ${c.fileName}]`);
    }
  }
  return { attachments, notes };
}

const PHOTO_EXT = new Set([".jpg", ".jpeg", ".png", ".webp"]);
/** Telegram's limit for `sendPhoto` uploads. */
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;

/** Whether an outbound file goes as a photo (shown inline) or a document (sent as is). */
export async function outboundKind(file: OutboundFile): Promise<"photo" | "document"> {
  const name = (file.fileName ?? file.path).toLowerCase();
  const looksLikePhoto = file.mimeType
    ? /^image\/(jpeg|png|webp)$/.test(file.mimeType)
    : PHOTO_EXT.has(extname(name));
  if (!looksLikePhoto) return "document";
  const info = await stat(file.path).catch(() => undefined);
  return info && info.size <= PHOTO_MAX_BYTES ? "photo" : "document";
}
