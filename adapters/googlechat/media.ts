/**
 * Files in and out of Google Chat. In: each uploaded attachment of a message is fetched with
 * `media.download` (the app's token) into `HERALD_HOME/cache/googlechat/`, capped at the media limit;
 * Drive files are named only (reading them needs the user's Drive consent). Out: Chat takes uploads
 * only with a user's credentials, not an app's, so files Herald sends are named in the text.
 */
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment, OutboundFile } from "../../core/types.js";
import { attachmentKindOf, FileTooLargeError, safeFileName, writeCapped } from "../shared/media.js";
import type { ChatApi } from "./api.js";
import type { ChatAttachment } from "./types.js";

/** What became of a message's files. */
export interface SavedFiles {
  files: InboundAttachment[];
  notes: string[];
}

/** Downloads a message's uploads. Never throws: a failed file becomes a note. */
export async function saveFiles(
  api: ChatApi,
  messageName: string,
  attachments: readonly ChatAttachment[],
  options: { cacheDir: string; maxBytes: number; logger: Logger },
): Promise<SavedFiles> {
  const out: SavedFiles = { files: [], notes: [] };
  if (!attachments.length) return out;
  const dir = join(options.cacheDir, "googlechat");
  await mkdir(dir, { recursive: true });
  for (const [i, a] of attachments.entries()) {
    const name = a.contentName || `file-${i + 1}`;
    if (!a.attachmentDataRef) {
      out.notes.push(`[${name}: a Drive file; not downloaded]`);
      continue;
    }
    const path = join(
      dir,
      `${safeFileName(messageName.split("/").pop() ?? "m", 40)}-${i}-${safeFileName(name)}`,
    );
    try {
      const res = await api.download(a.attachmentDataRef.resourceName);
      if (!res.body) throw new Error("empty body");
      const size = await writeCapped(Readable.fromWeb(res.body as never), path, options.maxBytes, {
        mode: 0o600,
      });
      out.files.push({
        kind: attachmentKindOf(a.contentType),
        path,
        fileName: name,
        mimeType: a.contentType,
        sizeBytes: size,
      });
    } catch (err) {
      if (err instanceof FileTooLargeError) out.notes.push(`[${name}: over the size limit; not downloaded]`);
      else {
        options.logger.warn({ file: name, error: describeError(err) }, "googlechat file download failed");
        out.notes.push(`[${name}: could not be downloaded]`);
      }
    }
  }
  return out;
}

/** The notes naming files Herald cannot attach. */
export function outboundNotes(files: readonly OutboundFile[]): string[] {
  return files.map(
    (f) => `📎 ${f.fileName ?? basename(f.path)} (a Chat app cannot upload files; it was not attached)`,
  );
}
