/**
 * Files a platform fetches from a URL instead of taking an upload (LINE images, Twilio MMS): each file
 * to send is registered under an unguessable id in the adapter's key-value store and served from the
 * gateway's webhook path, `<publicUrl>/webhooks/<platform>/media/<id>`, for a day (kept across restarts,
 * so a retried send still finds it).
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import type { KeyValueStore, OutboundFile } from "../../core/types.js";

/** How long a served file stays fetchable. @defaultValue one day */
export const SERVED_MS = 24 * 60 * 60 * 1000;

interface Served {
  path: string;
  mimeType?: string | undefined;
  expiresAt: number;
}

/** Registers `file` and returns the URL it is served at under `publicBase` (`…/webhooks/<platform>`). */
export function serveFile(file: OutboundFile, publicBase: string, kv: KeyValueStore): string {
  const id = randomBytes(18).toString("base64url");
  const served: Served = { path: file.path, mimeType: file.mimeType, expiresAt: Date.now() + SERVED_MS };
  kv.set(`media:${id}`, JSON.stringify(served));
  return `${publicBase.replace(/\/+$/, "")}/media/${id}`;
}

/** The media id a webhook path names (`…/media/<id>`), if it names one. */
export function servedId(request: Request): string | undefined {
  if (request.method !== "GET") return undefined;
  return /\/media\/([\w-]+)$/.exec(new URL(request.url).pathname)?.[1];
}

/** Answers a fetch of a served file: the bytes, or 404 for an unknown or expired id. */
export async function answerServed(id: string, kv: KeyValueStore): Promise<Response> {
  const raw = kv.get(`media:${id}`);
  const served = raw ? (JSON.parse(raw) as Served) : undefined;
  if (!served || served.expiresAt < Date.now()) {
    if (served) kv.delete(`media:${id}`);
    return new Response("not found", { status: 404 });
  }
  const info = await stat(served.path).catch(() => undefined);
  if (!info) return new Response("not found", { status: 404 });
  return new Response(Readable.toWeb(createReadStream(served.path)) as ReadableStream, {
    headers: {
      "content-type": served.mimeType ?? "application/octet-stream",
      "content-length": String(info.size),
    },
  });
}
