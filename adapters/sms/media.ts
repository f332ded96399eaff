/**
 * MMS media in: each `MediaUrl<i>` of an incoming MMS is downloaded into `HERALD_HOME/cache/sms/` with
 * the account's credentials (HTTP basic auth, as Twilio's media URLs require unless the account turned
 * that off), sent only to Twilio's own hosts; the download is cut off at the media cap.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment } from "../../core/types.js";
import { attachmentKindOf, FileTooLargeError, safeFileName, writeCapped } from "../shared/media.js";

/** What became of a message's media: the saved files and notes on those skipped. */
export interface SavedMedia {
  files: InboundAttachment[];
  notes: string[];
}

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "audio/amr": "amr",
  "audio/mpeg": "mp3",
  "video/mp4": "mp4",
  "text/plain": "txt",
  "text/vcard": "vcf",
  "application/pdf": "pdf",
};

/** Whether `url` is Twilio's (or the configured API's) and may get the account's credentials. */
function isTwilioHost(url: URL, apiUrl: string): boolean {
  return (
    url.origin === new URL(apiUrl).origin ||
    url.hostname === "twilio.com" ||
    url.hostname.endsWith(".twilio.com")
  );
}

/** Downloads an MMS's media. Never throws: a failed file becomes a note. */
export async function saveMedia(
  messageSid: string,
  media: { url: string; mimeType: string | undefined }[],
  options: { cacheDir: string; maxBytes: number; logger: Logger; apiUrl: string; auth: string },
): Promise<SavedMedia> {
  const out: SavedMedia = { files: [], notes: [] };
  if (media.length === 0) return out;
  const dir = join(options.cacheDir, "sms");
  await mkdir(dir, { recursive: true });
  for (const [i, item] of media.entries()) {
    const name = `${messageSid}-${i}.${EXTENSIONS[item.mimeType ?? ""] ?? "bin"}`;
    const path = join(dir, safeFileName(name));
    try {
      const url = new URL(item.url);
      const headers: Record<string, string> = isTwilioHost(url, options.apiUrl)
        ? { authorization: `Basic ${options.auth}` }
        : {};
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
      if (!res.ok || !res.body) throw new Error(`media answered ${res.status}`);
      const mimeType = item.mimeType ?? res.headers.get("content-type") ?? undefined;
      const size = await writeCapped(Readable.fromWeb(res.body as never), path, options.maxBytes, {
        mode: 0o600,
      });
      out.files.push({ kind: attachmentKindOf(mimeType), path, fileName: name, mimeType, sizeBytes: size });
    } catch (err) {
      if (err instanceof FileTooLargeError) {
        out.notes.push(`[${name}: over the size limit; not downloaded]`);
        continue;
      }
      options.logger.warn({ messageSid, error: describeError(err) }, "sms media download failed");
      out.notes.push(`[${name}: could not be downloaded]`);
    }
  }
  return out;
}
