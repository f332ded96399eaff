/**
 * Files in and out of Teams. In: a file shared in a personal chat comes as a `file.download.info`
 * attachment with a pre-authorised `downloadUrl`; a pasted image as an attachment whose `contentUrl`
 * needs the bot's token, which is sent only to the conversation's own connector (`serviceUrl`, whose
 * host the inbound token vouched for) and to Teams' media store (`*.asm.skype.com`). Each is saved
 * under `HERALD_HOME/cache/teams/`, capped at the media limit. Out: Teams lets a bot attach files only
 * through OneDrive (a consent card in personal chats, Graph in channels), so Herald sends images up to
 * 1 MiB inline (a data URL, which Teams shows in every kind of chat) and names other files in the text.
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
  readOutboundFile,
  safeFileName,
  writeCapped,
} from "../shared/media.js";
import type { TeamsTokens } from "./auth.js";
import { fileDownloadInfo, type OutAttachment, type TeamsActivity } from "./types.js";

/** Images sent inline at most this large. */
export const INLINE_IMAGE_MAX_BYTES = 1024 * 1024;
const INLINE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** What became of an activity's files. */
export interface SavedFiles {
  files: InboundAttachment[];
  notes: string[];
}

interface Download {
  url: string;
  name: string;
  mimeType?: string | undefined;
  withToken: boolean;
}

/** Whether the bot's token may go to `url`: the conversation's connector, or Teams' media store. */
export function tokenMayGoTo(url: string, serviceUrl: string): boolean {
  try {
    const target = new URL(url);
    if (target.origin === new URL(serviceUrl).origin) return true;
    return target.protocol === "https:" && target.hostname.endsWith(".asm.skype.com");
  } catch {
    return false;
  }
}

function downloadsOf(activity: TeamsActivity): Download[] {
  const out: Download[] = [];
  for (const [i, a] of (activity.attachments ?? []).entries()) {
    const name = a.name || `file-${i + 1}`;
    if (a.contentType === "application/vnd.microsoft.teams.file.download.info") {
      const info = fileDownloadInfo.safeParse(a.content);
      if (info.success) out.push({ url: info.data.downloadUrl, name, withToken: false });
    } else if (a.contentUrl && !a.contentType.startsWith("application/vnd.microsoft.card")) {
      if (!a.contentType.startsWith("text/html") && tokenMayGoTo(a.contentUrl, activity.serviceUrl))
        out.push({ url: a.contentUrl, name, mimeType: a.contentType, withToken: true });
    }
  }
  return out;
}

/** Downloads an activity's files into `cacheDir/teams/`. Never throws: a failed file becomes a note. */
export async function saveFiles(
  activity: TeamsActivity,
  options: { cacheDir: string; maxBytes: number; tokens: TeamsTokens; logger: Logger },
): Promise<SavedFiles> {
  const out: SavedFiles = { files: [], notes: [] };
  const downloads = downloadsOf(activity);
  if (!downloads.length) return out;
  const dir = join(options.cacheDir, "teams");
  await mkdir(dir, { recursive: true });
  for (const [i, d] of downloads.entries()) {
    const path = join(dir, `${safeFileName(activity.id ?? "x", 40)}-${i}-${safeFileName(d.name)}`);
    try {
      const headers: Record<string, string> = d.withToken
        ? { authorization: `Bearer ${await options.tokens.get()}` }
        : {};
      const res = await fetch(d.url, { headers, signal: AbortSignal.timeout(60_000) });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      const mimeType = d.mimeType ?? res.headers.get("content-type")?.split(";")[0] ?? undefined;
      const size = await writeCapped(Readable.fromWeb(res.body as never), path, options.maxBytes, {
        mode: 0o600,
      });
      out.files.push({ kind: attachmentKindOf(mimeType), path, fileName: d.name, mimeType, sizeBytes: size });
    } catch (err) {
      if (err instanceof FileTooLargeError)
        out.notes.push(`[${d.name}: over the size limit; not downloaded]`);
      else {
        options.logger.warn({ file: d.name, error: describeError(err) }, "teams file download failed");
        out.notes.push(`[${d.name}: could not be downloaded]`);
      }
    }
  }
  return out;
}

/** The attachments and text notes for files going out. */
export async function outboundFiles(
  files: readonly OutboundFile[],
): Promise<{ attachments: OutAttachment[]; notes: string[] }> {
  const attachments: OutAttachment[] = [];
  const notes: string[] = [];
  for (const file of files) {
    const name = file.fileName ?? basename(file.path);
    const mimeType = file.mimeType ?? "";
    if (INLINE_TYPES.has(mimeType)) {
      const bytes = await readOutboundFile("teams", file.path, INLINE_IMAGE_MAX_BYTES).catch(() => undefined);
      if (bytes) {
        attachments.push({
          contentType: mimeType,
          contentUrl: `data:${mimeType};base64,${bytes.toString("base64")}`,
          name,
        });
        continue;
      }
    }
    notes.push(`📎 ${name} (Teams does not take this file from a bot; it was not attached)`);
  }
  return { attachments, notes };
}
