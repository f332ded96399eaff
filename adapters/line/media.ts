/**
 * Files in and out of LINE. In: an image, video, audio or file message's content is fetched from the
 * content API (`GET /v2/bot/message/{id}/content` on api-data) into `HERALD_HOME/cache/line/`, cut off
 * at the media cap. Out: LINE takes images only as HTTPS URLs it fetches itself, so a file to send is
 * served from `<publicUrl>/webhooks/line/media/<id>` (a further account's `/webhooks/line@<account>/…`) for a day (`adapters/shared/served-files.ts`);
 * images go as image messages, other files as a flex file card with a download button.
 */
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import type { messagingApi } from "@line/bot-sdk";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment, KeyValueStore, OutboundFile } from "../../core/types.js";
import {
  attachmentKindOf,
  FileTooLargeError,
  megabytes,
  safeFileName,
  writeCapped,
} from "../shared/media.js";
import { serveFile } from "../shared/served-files.js";
import type { LineApi } from "./api.js";
import { fileCard } from "./format.js";
import type { LineMessage } from "./types.js";

/** What became of a message's content: the saved file, or a note on why not. */
export interface SavedContent {
  file?: InboundAttachment | undefined;
  note?: string | undefined;
}

const KINDS: Record<string, InboundAttachment["kind"]> = { image: "image", video: "video", audio: "voice" };

/** Downloads a message's content under `cacheDir/line/`. Never throws: a failed file becomes a note. */
export async function saveContent(
  api: LineApi,
  message: LineMessage,
  options: { cacheDir: string; maxBytes: number; logger: Logger },
): Promise<SavedContent> {
  const name = message.fileName ?? `${message.type}-${message.id}`;
  // Content kept by an external provider (LIFF, some bots) is not on LINE's servers.
  if (message.contentProvider && message.contentProvider.type !== "line")
    return { note: `[${name}: not downloadable]` };
  if ((message.fileSize ?? 0) > options.maxBytes) {
    return { note: `[${name}: ${megabytes(message.fileSize!)}, over the size limit; not downloaded]` };
  }
  const dir = join(options.cacheDir, "line");
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${message.id}-${safeFileName(name)}`);
  try {
    const { body, mimeType } = await api.content(message.id);
    const size = await writeCapped(body, path, options.maxBytes, { mode: 0o600 });
    const kind = KINDS[message.type] ?? attachmentKindOf(mimeType);
    return { file: { kind, path, fileName: message.fileName, mimeType, sizeBytes: size } };
  } catch (err) {
    if (err instanceof FileTooLargeError) return { note: `[${name}: over the size limit; not downloaded]` };
    options.logger.warn({ messageId: message.id, error: describeError(err) }, "line content download failed");
    return { note: `[${name}: could not be downloaded]` };
  }
}

/** The message that sends `file`: an image, or a file card; a note when no public URL is configured. */
export function fileMessage(
  file: OutboundFile,
  options: {
    publicUrl: string | undefined;
    kv: KeyValueStore;
    /** The adapter's webhook path (a further account's is its own). @defaultValue `/webhooks/line` */
    webhookPath?: string | undefined;
  },
): messagingApi.Message {
  const name = file.fileName ?? basename(file.path);
  if (!options.publicUrl) {
    return {
      type: "text",
      text: `📎 ${name} (not sent: LINE fetches files from a URL; set LINE_PUBLIC_URL)`,
    };
  }
  const base = `${options.publicUrl.replace(/\/+$/, "")}${options.webhookPath ?? "/webhooks/line"}`;
  const url = serveFile(file, base, options.kv);
  if (file.mimeType?.startsWith("image/")) {
    return { type: "image", originalContentUrl: url, previewImageUrl: url };
  }
  return fileCard(name, url, file.caption);
}
