/**
 * Files in and out. Inbound media is downloaded (and decrypted) by Baileys from WhatsApp's media servers
 * into `HERALD_HOME/cache/whatsapp/`, capped at `media.maxBytes`: a file over the cap is left out and the
 * agent gets a note instead. Outbound files go as images (image types) or documents (everything else).
 */
import { mkdir, unlink } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { type AnyMessageContent, downloadMediaMessage } from "@whiskeysockets/baileys";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment, OutboundFile } from "../../core/types.js";
import { FileTooLargeError, safeFileName, writeCapped } from "../shared/media.js";
import type { MediaRef } from "./parse.js";
import type { WAMessage } from "./types.js";

export interface MediaDownloadOptions {
  /** `HERALD_HOME/cache`; files go under `whatsapp/`. */
  cacheDir: string;
  maxBytes: number;
  logger: Logger;
  /** Asks the sender's phone to upload expired media again (the socket's `updateMediaMessage`). */
  reuploadRequest?: ((message: WAMessage) => Promise<WAMessage>) | undefined;
}

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": ".jpg",
  "image/png": ".png",
  "image/webp": ".webp",
  "image/gif": ".gif",
  "audio/ogg": ".ogg",
  "audio/mpeg": ".mp3",
  "audio/mp4": ".m4a",
  "audio/aac": ".aac",
  "video/mp4": ".mp4",
  "application/pdf": ".pdf",
  "text/plain": ".txt",
};
const MIME_BY_EXTENSION = Object.fromEntries(Object.entries(EXTENSIONS).map(([m, e]) => [e, m]));
MIME_BY_EXTENSION[".jpeg"] = "image/jpeg";

const humanSize = (n: number) =>
  n >= 1024 * 1024
    ? `${(n / (1024 * 1024)).toFixed(1)} MB`
    : n >= 1024
      ? `${(n / 1024).toFixed(1)} KB`
      : `${n} bytes`;
const describe = (ref: MediaRef) =>
  ref.fileName ? `"${ref.fileName}"` : ref.kind === "voice" ? "voice note" : ref.kind;

/**
 * Downloads one message's media. Returns the attachment, or a note for the agent saying why it was left
 * out (too large, download failed). Never throws.
 */
export async function downloadMedia(
  message: WAMessage,
  ref: MediaRef,
  options: MediaDownloadOptions,
): Promise<InboundAttachment | string> {
  const limit = `the ${humanSize(options.maxBytes)} limit`;
  if (ref.sizeBytes !== undefined && ref.sizeBytes > options.maxBytes) {
    return `(${describe(ref)} not received: ${humanSize(ref.sizeBytes)} is over ${limit})`;
  }
  const dir = join(options.cacheDir, "whatsapp");
  const mime = ref.mimeType?.split(";")[0]?.trim();
  const ext = ref.fileName ? "" : (EXTENSIONS[mime ?? ""] ?? ".bin");
  const id = safeFileName(message.key.id ?? "media");
  const path = join(dir, ref.fileName ? `${id}-${safeFileName(basename(ref.fileName))}` : `${id}${ext}`);
  const log = options.logger.child({ messageId: message.key.id });
  try {
    await mkdir(dir, { recursive: true });
    const stream = await downloadMediaMessage(
      message,
      "stream",
      {},
      {
        logger: options.logger,
        reuploadRequest:
          options.reuploadRequest ??
          (() => Promise.reject(new Error("media expired and the socket cannot ask for a re-upload"))),
      },
    );
    const sizeBytes = await writeCapped(stream, path, options.maxBytes, { mode: 0o600 });
    return {
      kind: ref.kind,
      path,
      fileName: ref.fileName,
      mimeType: ref.mimeType,
      sizeBytes,
    };
  } catch (err) {
    await unlink(path).catch(() => undefined);
    if (err instanceof FileTooLargeError)
      return `(${describe(ref)} not received: it is larger than ${limit})`;
    log.warn({ err: describeError(err) }, "whatsapp media download failed");
    return `(${describe(ref)} could not be downloaded)`;
  }
}

/** The MIME type of an outbound file: as given, else from its extension. */
export function mimeOf(file: OutboundFile): string {
  return file.mimeType ?? MIME_BY_EXTENSION[extname(file.path).toLowerCase()] ?? "application/octet-stream";
}

/**
 * The Baileys message content for one outbound file: a push-to-talk voice note for a spoken reply
 * (Ogg/Opus), an image for image types, else a document.
 */
export function fileContent(file: OutboundFile): AnyMessageContent {
  const mimetype = mimeOf(file);
  const caption = file.caption || undefined;
  if (file.voice) return { audio: { url: file.path }, mimetype: "audio/ogg; codecs=opus", ptt: true };
  if (/^image\/(jpeg|png|webp)$/.test(mimetype)) {
    return { image: { url: file.path }, mimetype, ...(caption ? { caption } : {}) };
  }
  return {
    document: { url: file.path },
    mimetype,
    fileName: file.fileName ?? basename(file.path),
    ...(caption ? { caption } : {}),
  };
}
