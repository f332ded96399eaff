/**
 * A fake WhatsApp media server on 127.0.0.1: files are encrypted with Baileys' own `encryptedStream`
 * (AES-256-CBC + HMAC with a random media key, as a phone uploads them) and served over HTTP, so the
 * adapter's real download-and-decrypt path runs against them.
 */
import { readFile, unlink } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { encryptedStream, type MediaType } from "@whiskeysockets/baileys";

export interface UploadedMedia {
  url: string;
  mediaKey: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

export interface FakeMediaServer {
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  upload(data: Buffer, mediaType: MediaType): Promise<UploadedMedia>;
  close(): Promise<void>;
}

export async function startFakeMediaServer(): Promise<FakeMediaServer> {
  const files = new Map<string, Buffer>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const body = files.get(new URL(req.url ?? "/", "http://x").pathname);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let counter = 0;
  return {
    url,
    requests,
    async upload(data, mediaType) {
      const enc = await encryptedStream(data, mediaType);
      const path = `/v/t62/${mediaType}-${++counter}.enc`;
      files.set(path, await readFile(enc.encFilePath));
      await unlink(enc.encFilePath).catch(() => undefined);
      return {
        url: `${url}${path}`,
        mediaKey: enc.mediaKey,
        fileSha256: enc.fileSha256,
        fileEncSha256: enc.fileEncSha256,
        fileLength: enc.fileLength,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
