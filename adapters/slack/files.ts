/**
 * Inbound files: downloaded with the bot token (Slack's `url_private` needs it) into the cache folder,
 * capped in size. The token is only ever sent to Slack's own hosts (or the configured API host), never to
 * a URL that merely appears in a payload.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment } from "../../core/types.js";
import { attachmentKindOf, megabytes, safeFileName } from "../shared/media.js";
import type { SlackFile } from "./types.js";

export interface DownloadOptions {
  botToken: string;
  /** `HERALD_HOME/cache`; files go under `slack/`. */
  cacheDir: string;
  maxBytes: number;
  /** Extra host allowed to receive the token besides Slack's (the host of SLACK_API_URL). */
  apiHost: string;
  logger: Logger;
  signal?: AbortSignal | undefined;
}

/** What came of a message's files: the downloaded ones, and a note for the agent per file left out. */
export interface DownloadResult {
  attachments: InboundAttachment[];
  notes: string[];
}

const SLACK_HOSTS = /(^|\.)(slack\.com|slack-edge\.com|slack-gov\.com|slack-files\.com)$/;

/** Reads `response`'s body, giving up (undefined) once it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  if (!response.body) return Buffer.alloc(0);
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

/** Downloads one file. Returns the attachment, or a note saying why it was left out. Never throws. */
async function downloadOne(file: SlackFile, options: DownloadOptions): Promise<InboundAttachment | string> {
  const name = file.name ?? file.title ?? file.id;
  const log = options.logger.child({ fileId: file.id });
  const url = file.url_private_download ?? file.url_private;
  if (!url) return `(attachment "${name}" has no downloadable content)`;
  if (file.size && file.size > options.maxBytes) {
    return `(attachment "${name}" not downloaded: ${megabytes(file.size)} is over the ${megabytes(options.maxBytes)} limit)`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `(attachment "${name}" has an invalid URL)`;
  }
  if (parsed.host !== options.apiHost && !SLACK_HOSTS.test(parsed.hostname)) {
    log.warn({ host: parsed.host }, "slack file URL is not on a Slack host; not sending the bot token there");
    return `(attachment "${name}" could not be downloaded)`;
  }
  try {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${options.botToken}` },
      signal: options.signal ?? null,
    });
    if (!response.ok) {
      log.warn({ status: response.status }, "slack file download failed");
      return `(attachment "${name}" could not be downloaded)`;
    }
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/html") && !(file.mimetype ?? "").startsWith("text/html")) {
      // Slack answers a token without files:read with its sign-in page, not an error status.
      log.error(
        {},
        "slack file download returned a sign-in page: the bot token lacks the files:read scope; add it under OAuth & Permissions and reinstall the app",
      );
      return `(attachment "${name}" could not be downloaded: the Slack app lacks the files:read scope)`;
    }
    const data = await readCapped(response, options.maxBytes);
    if (!data) return `(attachment "${name}" not downloaded: over the ${megabytes(options.maxBytes)} limit)`;
    const dir = join(options.cacheDir, "slack");
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${safeFileName(file.id)}-${safeFileName(name)}`);
    await writeFile(path, data);
    const mimeType = file.mimetype ?? undefined;
    return { kind: attachmentKindOf(mimeType), path, fileName: name, mimeType, sizeBytes: data.byteLength };
  } catch (err) {
    log.warn({ error: describeError(err) }, "slack file download failed");
    return `(attachment "${name}" could not be downloaded)`;
  }
}

/** Downloads a message's files one after another. Never throws. */
export async function downloadFiles(files: SlackFile[], options: DownloadOptions): Promise<DownloadResult> {
  const result: DownloadResult = { attachments: [], notes: [] };
  for (const file of files) {
    const got = await downloadOne(file, options);
    if (typeof got === "string") result.notes.push(got);
    else result.attachments.push(got);
  }
  return result;
}
