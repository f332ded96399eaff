/**
 * A fake OpenAI-compatible images server on 127.0.0.1 (node:http, random free port):
 * `POST /v1/images/generations` answers `n` real PNG images (a solid colour picked from the prompt,
 * encoded here with zlib) as `b64_json`, or as `url`s it serves itself (`GET /files/<name>.png`) when
 * started with `answer: "url"`; it reports `usage` as gpt-image-1 does. `fail()` queues error answers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { deflateSync } from "node:zlib";

/** One generation request as the server received it. */
export interface RecordedGeneration {
  model: string;
  prompt: string;
  n: number;
  size: string | undefined;
  responseFormat: string | undefined;
  authorization: string | undefined;
}

export interface FakeImages {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  generations: RecordedGeneration[];
  /** Queues `times` error answers with `status` (and the provider's `message`). */
  fail(failure: { status: number; times?: number; message?: string }): void;
  close(): Promise<void>;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([head, body, crc]);
}

/** A real RGB PNG of `width`×`height` in one colour. */
export function solidPng(width: number, height: number, rgb: readonly [number, number, number]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, deflate, no filter, no interlace
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** Width and height of a PNG's IHDR, or undefined when the bytes are not a PNG. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const b = Buffer.from(bytes);
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString("latin1", 12, 16) !== "IHDR")
    return undefined;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  try {
    return JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function sendJson(res: ServerResponse, status: number, body: object): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

/**
 * Starts the fake. Images are 64×64 unless `size` asks for a square up to 256 (tests stay small).
 * @param options.apiKey when set, a request without `Bearer <apiKey>` gets 401.
 * @param options.answer `b64_json` (gpt-image-1's way) or `url`. @defaultValue "b64_json"
 */
export async function startFakeImages(
  options: { apiKey?: string; answer?: "b64_json" | "url" } = {},
): Promise<FakeImages> {
  const generations: RecordedGeneration[] = [];
  const failures: { status: number; times: number; message: string }[] = [];
  const files = new Map<string, Buffer>();
  let base = "";
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => sendJson(res, 500, { error: { message: String(err) } }));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "GET" && path.startsWith("/files/")) {
      const png = files.get(path.slice("/files/".length));
      if (!png) return sendJson(res, 404, { error: { message: "no such file" } });
      res.writeHead(200, { "content-type": "image/png", "content-length": png.length });
      res.end(png);
      return;
    }
    if (req.method !== "POST" || path !== "/v1/images/generations")
      return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    const authorization = req.headers.authorization;
    if (options.apiKey && authorization !== `Bearer ${options.apiKey}`)
      return sendJson(res, 401, {
        error: { message: "Incorrect API key provided", code: "invalid_api_key" },
      });
    const body = await readJson(req);
    const failure = failures[0];
    if (failure) {
      if (--failure.times <= 0) failures.shift();
      return sendJson(res, failure.status, { error: { message: failure.message } });
    }
    if (typeof body["prompt"] !== "string" || !body["prompt"])
      return sendJson(res, 400, { error: { message: "prompt is required", param: "prompt" } });
    const n = typeof body["n"] === "number" ? body["n"] : 1;
    const size = typeof body["size"] === "string" ? body["size"] : undefined;
    const prompt = body["prompt"];
    generations.push({
      model: String(body["model"] ?? ""),
      prompt,
      n,
      size,
      responseFormat: typeof body["response_format"] === "string" ? body["response_format"] : undefined,
      authorization,
    });
    const side = Math.min(256, Number(/^(\d+)x\1$/.exec(size ?? "")?.[1] ?? 64));
    const seed = crc32(Buffer.from(prompt));
    const data = Array.from({ length: n }, (_, i) => {
      const png = solidPng(side, side, [seed & 0xff, (seed >>> 8) & 0xff, (seed + i * 40) & 0xff]);
      if (options.answer === "url") {
        const name = `img-${generations.length}-${i}.png`;
        files.set(name, png);
        return { url: `${base}/files/${name}`, revised_prompt: `${prompt}, as a flat colour` };
      }
      return { b64_json: png.toString("base64"), revised_prompt: `${prompt}, as a flat colour` };
    });
    sendJson(res, 200, {
      created: Math.floor(Date.now() / 1000),
      data,
      usage: {
        input_tokens: prompt.split(/\s+/).length,
        output_tokens: 272 * n,
        total_tokens: prompt.split(/\s+/).length + 272 * n,
        input_tokens_details: { text_tokens: prompt.split(/\s+/).length, image_tokens: 0 },
      },
    });
  }
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${base}/v1`,
    generations,
    fail(failure) {
      failures.push({
        status: failure.status,
        times: failure.times ?? 1,
        message: failure.message ?? "failed",
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
