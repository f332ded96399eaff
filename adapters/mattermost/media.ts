/**
 * Files in and out of Mattermost. In: each file of a post is fetched through the API
 * (`GET /files/{id}`, with the bot's token) into `HERALD_HOME/cache/mattermost/`, skipped when its
 * metadata already says it is over the media cap, and cut off when the download passes it. Out: files are
 * uploaded to the channel (`POST /files`, multipart) and the post carries their `file_ids`.
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
import type { MattermostApi } from "./api.js";
import { fileInfoSchema, type MattermostFileInfo, type MattermostPost } from "./types.js";

/** What became of a post's files: the saved ones and notes on those skipped. */
export interface SavedFiles {
  files: InboundAttachment[];
  notes: string[];
}

/** Downloads a post's files under `cacheDir/mattermost/`. Never throws: a failed file becomes a note. */
export async function saveFiles(
  api: MattermostApi,
  post: MattermostPost,
  options: { cacheDir: string; maxBytes: number; logger: Logger },
): Promise<SavedFiles> {
  const out: SavedFiles = { files: [], notes: [] };
  const infos = await fileInfos(api, post);
  if (!infos.length) return out;
  const dir = join(options.cacheDir, "mattermost");
  await mkdir(dir, { recursive: true });
  for (const info of infos) {
    const name = info.name || info.id;
    if (info.size > options.maxBytes) {
      out.notes.push(`[${name}: ${megabytes(info.size)}, over the size limit; not downloaded]`);
      continue;
    }
    const path = join(dir, `${post.id}-${info.id}-${safeFileName(name)}`);
    try {
      const response = await api.fetch(`files/${encodeURIComponent(info.id)}`);
      if (!response.body) throw new Error("empty body");
      const size = await writeCapped(Readable.fromWeb(response.body as never), path, options.maxBytes, {
        mode: 0o600,
      });
      out.files.push({
        kind: attachmentKindOf(info.mime_type),
        path,
        fileName: info.name || undefined,
        mimeType: info.mime_type,
        sizeBytes: size,
      });
    } catch (err) {
      if (err instanceof FileTooLargeError) {
        out.notes.push(`[${name}: over the size limit; not downloaded]`);
      } else {
        options.logger.warn(
          { fileId: info.id, error: describeError(err) },
          "mattermost file download failed",
        );
        out.notes.push(`[${name}: could not be downloaded]`);
      }
    }
  }
  return out;
}

/** The post's file metadata: from `metadata.files`, else asked for each of `file_ids`. */
async function fileInfos(api: MattermostApi, post: MattermostPost): Promise<MattermostFileInfo[]> {
  if (post.metadata?.files?.length) return post.metadata.files;
  const infos: MattermostFileInfo[] = [];
  for (const id of post.file_ids ?? []) {
    const raw = await api.call<unknown>(`files/${encodeURIComponent(id)}/info`).catch(() => ({ id }));
    const parsed = fileInfoSchema.safeParse(raw);
    infos.push(parsed.success ? parsed.data : { id, name: "", size: 0 });
  }
  return infos;
}

/** Uploads files into a channel; resolves to their ids for the post's `file_ids`. */
export async function uploadFiles(
  api: MattermostApi,
  channelId: string,
  files: readonly OutboundFile[],
  signal?: AbortSignal,
): Promise<string[]> {
  if (!files.length) return [];
  const form = new FormData();
  form.append("channel_id", channelId);
  for (const file of files) {
    const bytes = await readOutboundFile("mattermost", file.path);
    const name = file.fileName ?? basename(file.path);
    form.append("files", new Blob([bytes], { type: file.mimeType ?? "application/octet-stream" }), name);
  }
  const result = await api.call<{ file_infos?: { id: string }[] }>("files", {
    method: "POST",
    body: form,
    signal,
  });
  return (result?.file_infos ?? []).map((f) => f.id);
}
