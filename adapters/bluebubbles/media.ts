/**
 * Attachments in and out of iMessage. In: each attachment of a message is downloaded from the server
 * (`GET /api/v1/attachment/<guid>/download`) into `HERALD_HOME/cache/bluebubbles/`, skipped when its size
 * is already over the media cap and cut off when the download passes it. Out: a file is one message
 * of its own, uploaded as multipart to `POST /api/v1/message/attachment`.
 */
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment, OutboundFile } from "../../core/types.js";
import {
  attachmentKindOf,
  FileTooLargeError,
  megabytes,
  readOutboundFile,
  safeFileName,
  writeCapped,
} from "../shared/media.js";
import type { BlueBubblesApi } from "./api.js";
import type { BlueBubblesAttachment } from "./types.js";

/** What became of a message's attachments: the saved ones and notes on those skipped. */
export interface SavedFiles {
  files: InboundAttachment[];
  notes: string[];
}

/** Downloads a message's attachments. Never throws: a failed file becomes a note. */
export async function saveAttachments(
  api: BlueBubblesApi,
  attachments: BlueBubblesAttachment[],
  options: { cacheDir: string; maxBytes: number; logger: Logger },
): Promise<SavedFiles> {
  const out: SavedFiles = { files: [], notes: [] };
  if (attachments.length === 0) return out;
  const dir = join(options.cacheDir, "bluebubbles");
  await mkdir(dir, { recursive: true });
  for (const a of attachments) {
    const name = a.transferName || a.guid;
    if ((a.totalBytes ?? 0) > options.maxBytes) {
      out.notes.push(`[${name}: ${megabytes(a.totalBytes!)}, over the size limit; not downloaded]`);
      continue;
    }
    const path = join(dir, `${safeFileName(a.guid, 40)}-${safeFileName(name)}`);
    try {
      const res = await api.fetch(`attachment/${encodeURIComponent(a.guid)}/download`);
      if (!res.body) throw new Error("empty body");
      const size = await writeCapped(Readable.fromWeb(res.body as never), path, options.maxBytes, {
        mode: 0o600,
      });
      const mimeType = a.mimeType ?? res.headers.get("content-type") ?? undefined;
      out.files.push({ kind: attachmentKindOf(mimeType), path, fileName: name, mimeType, sizeBytes: size });
    } catch (err) {
      if (err instanceof FileTooLargeError) out.notes.push(`[${name}: over the size limit; not downloaded]`);
      else {
        options.logger.warn(
          { attachment: a.guid, error: describeError(err) },
          "bluebubbles attachment download failed",
        );
        out.notes.push(`[${name}: could not be downloaded]`);
      }
    }
  }
  return out;
}

/** Sends `file` as a message of its own; resolves to its guid. */
export async function sendAttachment(
  api: BlueBubblesApi,
  input: {
    chatGuid: string;
    file: OutboundFile;
    tempGuid: string;
    method: string;
    signal?: AbortSignal | undefined;
  },
): Promise<string> {
  const name = input.file.fileName ?? basename(input.file.path);
  const bytes = await readOutboundFile("bluebubbles", input.file.path);
  const form = new FormData();
  form.set("chatGuid", input.chatGuid);
  form.set("tempGuid", input.tempGuid);
  form.set("name", name);
  form.set("method", input.method);
  form.set(
    "attachment",
    new Blob([bytes], { type: input.file.mimeType ?? "application/octet-stream" }),
    name,
  );
  const sent = await api.call<{ guid?: string }>("message/attachment", { form, signal: input.signal });
  return sent?.guid ?? input.tempGuid;
}
