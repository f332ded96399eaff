/**
 * Files in the web chat. An upload is streamed to `HERALD_HOME/cache/web/` with the media size cap
 * (the same place and cap as the messengers' downloads) and becomes the attachment of the message it
 * is sent with. A file the agent sends is offered under an unguessable link (`/chat/files/<token>`)
 * that only its chat's user may open, kept in the adapter's key-value namespace so it works after a
 * restart. Downloads are attachments (never rendered in the chat's origin), but for raster images,
 * which the page shows inline.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { InboundAttachment, KeyValueStore, OutboundFile } from "../../core/types.js";
import { attachmentKindOf, safeFileName, writeCapped } from "../shared/media.js";
import type { WebFile } from "./types.js";

/** Images shown inline (no SVG: it can carry script). */
const INLINE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** The type of a sent file that came without one, by its extension (what the page plays or shows). */
const BY_EXTENSION: Record<string, string> = {
  ogg: "audio/ogg",
  opus: "audio/ogg",
  oga: "audio/ogg",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  m4a: "audio/mp4",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};
/** Uploads not sent with a message within this time are forgotten. */
const UPLOAD_TTL_MS = 60 * 60_000;

/** A stored file a link names. */
export interface OfferedFile {
  path: string;
  name: string;
  mimeType?: string | undefined;
  userId: string;
}

export interface WebFiles {
  /** Stores an upload of `userId`; its id for the message that sends it. @throws FileTooLargeError */
  upload(
    req: IncomingMessage,
    userId: string,
    name: string,
    mimeType: string | undefined,
    voice?: boolean,
  ): Promise<string>;
  /** The attachment (and its link for the pages) of upload `id`, only for its own user. */
  take(id: string, userId: string): { attachment: InboundAttachment; file: WebFile } | undefined;
  /** A link to a file the agent sent to `userId`. */
  offer(userId: string, file: OutboundFile): Promise<WebFile>;
  /** The file behind a link, only for its own user. */
  find(token: string, userId: string): OfferedFile | undefined;
}

/** Builds the file store. */
export function webFiles(options: { kv: KeyValueStore; dir: string; maxBytes: number }): WebFiles {
  const { kv, dir } = options;
  const uploads = new Map<string, InboundAttachment & { userId: string; at: number }>();
  const link = (f: OfferedFile): WebFile => {
    const token = randomBytes(18).toString("base64url");
    kv.set(`file:${token}`, JSON.stringify(f));
    return {
      name: f.name,
      url: `/chat/files/${token}/${encodeURIComponent(f.name)}`,
      ...(f.mimeType ? { mimeType: f.mimeType } : {}),
      ...(f.mimeType && INLINE_TYPES.has(f.mimeType) ? { inline: true } : {}),
      ...(isAudio(f.mimeType) ? { audio: true } : {}),
    };
  };
  return {
    async upload(req, userId, name, mimeType, voice = false) {
      mkdirSync(dir, { recursive: true });
      const id = randomBytes(12).toString("base64url");
      const path = join(dir, `${id}-${safeFileName(name)}`);
      const sizeBytes = await writeCapped(req, path, options.maxBytes, { mode: 0o600 });
      const now = Date.now();
      for (const [k, u] of uploads) if (u.at < now - UPLOAD_TTL_MS) uploads.delete(k);
      uploads.set(id, {
        kind: voice && mimeType?.startsWith("audio/") ? "voice" : attachmentKindOf(mimeType),
        path,
        fileName: name,
        mimeType,
        sizeBytes,
        userId,
        at: now,
      });
      return id;
    },
    take(id, userId) {
      const u = uploads.get(id);
      if (!u || u.userId !== userId) return undefined;
      uploads.delete(id);
      const { userId: _user, at: _at, ...attachment } = u;
      const name = u.fileName ?? "file";
      return { attachment, file: link({ path: u.path, name, mimeType: u.mimeType, userId }) };
    },
    async offer(userId, file) {
      const name = file.fileName ?? file.path.split("/").pop() ?? "file";
      await stat(file.path);
      const mimeType = file.mimeType ?? BY_EXTENSION[name.split(".").pop()?.toLowerCase() ?? ""];
      return link({ path: file.path, name, mimeType, userId });
    },
    find(token, userId) {
      if (!/^[A-Za-z0-9_-]{24}$/.test(token)) return undefined;
      const raw = kv.get(`file:${token}`);
      const f = raw ? (JSON.parse(raw) as OfferedFile) : undefined;
      return f && f.userId === userId ? f : undefined;
    },
  };
}

/** Audio the page plays in place (a spoken reply, a voice note): served with its own type. */
const AUDIO_TYPES = new Set(["audio/ogg", "audio/mpeg", "audio/webm", "audio/wav", "audio/mp4", "audio/aac"]);

/** Whether a file is audio the page plays. */
export function isAudio(mimeType: string | undefined): boolean {
  return mimeType !== undefined && AUDIO_TYPES.has(mimeType);
}

/** Whether a file is shown inline rather than downloaded. */
export function isInline(mimeType: string | undefined): boolean {
  return mimeType !== undefined && INLINE_TYPES.has(mimeType);
}
