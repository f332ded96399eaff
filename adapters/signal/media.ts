/**
 * Files in and out of Signal. In: signal-cli stores a received attachment in its data folder
 * (`~/.local/share/signal-cli/attachments/<id>`); Herald asks for it over JSON-RPC (`getAttachment`,
 * base64), so the daemon may run elsewhere, and saves it under `HERALD_HOME/cache/signal/`. Out: files go
 * inline as data URIs (`data:<type>;filename=<name>;base64,…`), which signal-cli accepts in place of a path.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { ChatRef, InboundAttachment, OutboundFile } from "../../core/types.js";
import { attachmentKindOf, megabytes, readOutboundFile, safeFileName } from "../shared/media.js";
import { targetOf } from "./parse.js";
import type { SignalRpc } from "./rpc.js";
import type { SignalAttachment } from "./types.js";

/** What became of a message's attachments: the saved files and notes on those skipped. */
export interface SavedAttachments {
  files: InboundAttachment[];
  notes: string[];
}

/** Downloads each attachment under `cacheDir/signal/`, skipping those over `maxBytes`. */
export async function saveAttachments(
  rpc: SignalRpc,
  chat: ChatRef,
  attachments: readonly SignalAttachment[],
  options: { cacheDir: string; maxBytes: number; stamp: string },
): Promise<SavedAttachments> {
  const out: SavedAttachments = { files: [], notes: [] };
  const dir = join(options.cacheDir, "signal");
  await mkdir(dir, { recursive: true });
  for (const [i, a] of attachments.entries()) {
    const name = a.filename || `attachment-${i + 1}`;
    if (!a.id) continue;
    if ((a.size ?? 0) > options.maxBytes) {
      out.notes.push(`[${name}: ${megabytes(a.size ?? 0)}, over the size limit; not downloaded]`);
      continue;
    }
    const result = (await rpc.call("getAttachment", { id: a.id, ...targetOf(chat) })) as
      | { data?: string }
      | string
      | undefined;
    const base64 = typeof result === "string" ? result : result?.data;
    if (!base64) continue;
    const bytes = Buffer.from(base64, "base64");
    if (bytes.length > options.maxBytes) {
      out.notes.push(`[${name}: ${megabytes(bytes.length)}, over the size limit; not downloaded]`);
      continue;
    }
    const path = join(dir, `${options.stamp}-${i}-${safeFileName(name)}`);
    await writeFile(path, bytes, { mode: 0o600 });
    out.files.push({
      kind: attachmentKindOf(a.contentType),
      path,
      fileName: a.filename || undefined,
      mimeType: a.contentType,
      sizeBytes: bytes.length,
    });
  }
  return out;
}

/** A file as signal-cli's data-URI attachment. */
export async function dataUri(file: OutboundFile): Promise<string> {
  const bytes = await readOutboundFile("signal", file.path);
  const type = file.mimeType ?? "application/octet-stream";
  const name = (file.fileName ?? basename(file.path)).replace(/[;,]/g, "_");
  return `data:${type};filename=${name};base64,${bytes.toString("base64")}`;
}
