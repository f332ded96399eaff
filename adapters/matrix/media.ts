/**
 * Files in and out: inbound `mxc://` media downloaded (authenticated media, Matrix v1.11) under the cache
 * folder within the size cap; outbound files uploaded to the content repository and sent as
 * `m.image` / `m.audio` / `m.video` / `m.file`.
 */
import { randomBytes } from "node:crypto";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { MatrixClient } from "matrix-js-sdk";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment, OutboundFile } from "../../core/types.js";
import { readOutboundFile, safeFileName } from "../shared/media.js";
import type { MediaRef } from "./parse.js";
import type { BotIdentity, MatrixAdapterConfig } from "./types.js";

const TIMEOUT_MS = 60_000;

const MIME_BY_EXT: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".mp3": "audio/mpeg",
  ".ogg": "audio/ogg",
  ".mp4": "video/mp4",
  ".pdf": "application/pdf",
  ".txt": "text/plain",
};

/** Downloads one inbound file; undefined (logged) when it is too large or cannot be fetched. */
export async function downloadMedia(
  deps: { config: MatrixAdapterConfig; identity: BotIdentity; log: Logger },
  ref: MediaRef,
): Promise<InboundAttachment | undefined> {
  const { config, identity, log } = deps;
  const max = config.maxAttachmentBytes;
  if (ref.sizeBytes !== undefined && ref.sizeBytes > max) {
    log.info({ sizeBytes: ref.sizeBytes, max }, "matrix file over the size cap not downloaded");
    return undefined;
  }
  const m = /^mxc:\/\/([^/]+)\/([^/?#]+)$/.exec(ref.url);
  if (!m) return undefined;
  const url = `${config.homeserver}/_matrix/client/v1/media/download/${encodeURIComponent(m[1]!)}/${encodeURIComponent(m[2]!)}`;
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${identity.accessToken}` },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) {
      log.warn({ status: res.status }, "matrix file download refused");
      return undefined;
    }
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > max) {
      await res.body?.cancel();
      log.info({ sizeBytes: declared, max }, "matrix file over the size cap not downloaded");
      return undefined;
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > max) return undefined;
    const dir = join(config.cacheDir, "matrix");
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${randomBytes(6).toString("hex")}-${safeFileName(basename(ref.fileName), 80)}`);
    await writeFile(path, bytes);
    return {
      kind: ref.kind,
      path,
      fileName: ref.fileName,
      mimeType: ref.mimeType ?? res.headers.get("content-type") ?? undefined,
      sizeBytes: bytes.length,
    };
  } catch (err) {
    log.warn({ err: (err as Error).message }, "matrix file download failed");
    return undefined;
  }
}

/** Uploads a file and returns the message content that shows it. @throws PlatformError */
export async function uploadFile(client: MatrixClient, file: OutboundFile): Promise<Record<string, unknown>> {
  const name = file.fileName ?? basename(file.path);
  const mimeType = file.mimeType ?? MIME_BY_EXT[extname(name).toLowerCase()] ?? "application/octet-stream";
  let bytes: Buffer;
  try {
    bytes = await readOutboundFile("matrix", file.path);
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    throw new PlatformError("matrix", `File ${file.path} cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const url = `${client.baseUrl}/_matrix/media/v3/upload?filename=${encodeURIComponent(name)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${client.getAccessToken()}`, "content-type": mimeType },
      body: new Uint8Array(bytes),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new PlatformError("matrix", `Uploading ${name} failed: ${(err as Error).message}`, {
      cause: err,
      retryable: true,
    });
  }
  const body = (await res.json().catch(() => ({}))) as { content_uri?: unknown; retry_after_ms?: unknown };
  if (!res.ok || typeof body.content_uri !== "string") {
    throw new PlatformError("matrix", `Uploading ${name} failed: HTTP ${res.status}.`, {
      code: res.status === 429 ? "platform_rate_limited" : "platform_error",
      retryable: res.status === 429 || res.status >= 500,
      retryAfterMs: typeof body.retry_after_ms === "number" ? body.retry_after_ms : undefined,
    });
  }
  const msgtype = mimeType.startsWith("image/")
    ? "m.image"
    : mimeType.startsWith("audio/")
      ? "m.audio"
      : mimeType.startsWith("video/")
        ? "m.video"
        : "m.file";
  const size = (await stat(file.path)).size;
  return {
    msgtype,
    body: file.caption ?? name,
    filename: name,
    url: body.content_uri,
    info: { mimetype: mimeType, size },
  };
}
