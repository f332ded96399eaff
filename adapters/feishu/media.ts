/**
 * Files on Feishu: a message's images and files are downloaded with `messageResource.get` into the
 * media cache (size-capped; one over the cap becomes a note to the agent); files to send are uploaded
 * (`im.image.create` for images, `im.file.create` otherwise) and sent as `image` / `file` messages.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { type InboundAttachment, MAX_OUTBOUND_FILE_BYTES, type OutboundFile } from "../../core/types.js";
import {
  attachmentKindOf,
  FileTooLargeError,
  megabytes,
  safeFileName,
  writeCapped,
} from "../shared/media.js";
import type { FeishuApi } from "./api.js";
import type { FeishuResource } from "./types.js";

/** What was saved, and notes for what was not. */
export interface SavedFiles {
  files: InboundAttachment[];
  notes: string[];
}

/** Downloads a message's resources into `cacheDir`. Never throws: failures become notes. */
export async function saveResources(
  api: FeishuApi,
  messageId: string,
  resources: FeishuResource[],
  options: { cacheDir: string; maxBytes: number; logger: Logger },
): Promise<SavedFiles> {
  const saved: SavedFiles = { files: [], notes: [] };
  for (const [i, r] of resources.entries()) {
    const path = join(options.cacheDir, `feishu-${safeFileName(messageId)}-${i}-${safeFileName(r.name)}`);
    try {
      const res = await api.call("messageResource.get", (c) =>
        c.im.messageResource.get({
          path: { message_id: messageId, file_key: r.key },
          params: { type: r.type },
        }),
      );
      const mimeType = String(res.headers?.["content-type"] ?? "").split(";")[0] || undefined;
      const sizeBytes = await writeCapped(res.getReadableStream() as Readable, path, options.maxBytes);
      const kind = r.type === "image" ? "image" : attachmentKindOf(mimeType);
      saved.files.push({ kind, path, fileName: r.name, mimeType, sizeBytes });
    } catch (err) {
      const reason = err instanceof FileTooLargeError ? "over the size limit" : "could not be downloaded";
      options.logger.warn({ messageId, error: describeError(err) }, "feishu file not saved");
      saved.notes.push(`[${r.name}: ${reason}; not attached]`);
    }
  }
  return saved;
}

const IMAGE = /\.(png|jpe?g|gif|webp|bmp)$/i;

/** Uploads a file; resolves to the message type and content that sends it. */
export async function uploadFile(
  api: FeishuApi,
  file: OutboundFile,
): Promise<{ msgType: string; content: string }> {
  // A file stream: the SDK's multipart body names a stream's file, a Buffer would go as a plain field.
  const { size } = await stat(file.path);
  if (size > MAX_OUTBOUND_FILE_BYTES) {
    throw new PlatformError(
      "feishu",
      `${file.path} is over the ${megabytes(MAX_OUTBOUND_FILE_BYTES)} Herald sends; it was not sent`,
    );
  }
  const bytes = () => createReadStream(file.path);
  const name = file.fileName ?? file.path.split("/").pop() ?? "file";
  if (file.mimeType?.startsWith("image/") || IMAGE.test(name)) {
    const out = await api.call("im.image.create", (c) =>
      c.im.image.create({ data: { image_type: "message", image: bytes() } }),
    );
    if (!out?.image_key) throw new Error("Feishu gave no image_key for the upload");
    return { msgType: "image", content: JSON.stringify({ image_key: out.image_key }) };
  }
  const out = await api.call("im.file.create", (c) =>
    c.im.file.create({ data: { file_type: "stream", file_name: name, file: bytes() } }),
  );
  if (!out?.file_key) throw new Error("Feishu gave no file_key for the upload");
  return { msgType: "file", content: JSON.stringify({ file_key: out.file_key }) };
}
