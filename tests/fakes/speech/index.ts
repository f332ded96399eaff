/**
 * A fake OpenAI-compatible speech server on 127.0.0.1 (node:http, random free port).
 * `POST /v1/audio/transcriptions` parses the real multipart body, checks with ffprobe that the file is
 * audio, records what it got and answers a scripted transcript. `POST /v1/audio/speech` answers real
 * audio (espeak-ng, then ffmpeg to the asked format). `fail()` queues error answers (401, 429 with
 * retry-after, 500 then ok).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { espeak, ffmpeg, ffprobe, type ProbedAudio } from "./audio.js";

export { espeak, ffmpeg, ffprobe, makeLongAudio, makeVoiceNote, type ProbedAudio } from "./audio.js";

/** One transcription request as the server received it. */
export interface RecordedTranscription {
  model: string;
  filename: string;
  mimeType: string;
  bytes: Buffer;
  language: string | undefined;
  prompt: string | undefined;
  responseFormat: string | undefined;
  authorization: string | undefined;
  /** ffprobe of the uploaded bytes, or the reason it is not audio. */
  probe: ProbedAudio | { error: string };
}

/** One speech request as the server received it, and the audio it answered. */
export interface RecordedSpeech {
  model: string;
  input: string;
  voice: string;
  responseFormat: string;
  /** Duration of the audio it answered. */
  durationS: number;
}

/** A queued error answer; `times` requests in a row get it. */
export interface FakeFailure {
  status: number;
  times?: number;
  /** Sent as the `retry-after` header (seconds). */
  retryAfterS?: number;
  message?: string;
}

/** Makes the transcript of one request; `index` counts transcription requests from 0. */
export type TranscriptHandler = (request: RecordedTranscription, index: number) => string;

export interface FakeSpeech {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  transcriptions: RecordedTranscription[];
  speeches: RecordedSpeech[];
  /** Every request's method, path and status, in order (failures included). */
  log: { path: string; status: number; serverMs: number }[];
  /** Queues error answers for the next requests (either endpoint). */
  fail(failure: FakeFailure): void;
  /** The next request is answered only after `delayMs` (a provider that hangs; the client times out). */
  stall(delayMs: number): void;
  /** Sets how transcripts are made. @defaultValue "hello from herald" for every request */
  onTranscribe(handler: TranscriptHandler): void;
  close(): Promise<void>;
}

/**
 * Starts the fake. @param options.apiKey when set, a request without `Bearer <apiKey>` gets 401.
 */
export async function startFakeSpeech(options: { apiKey?: string } = {}): Promise<FakeSpeech> {
  const workDir = await mkdtemp(join(tmpdir(), "fake-speech-"));
  const transcriptions: RecordedTranscription[] = [];
  const speeches: RecordedSpeech[] = [];
  const log: FakeSpeech["log"] = [];
  const failures: { status: number; times: number; message: string; retryAfterS: number | undefined }[] = [];
  let transcript: TranscriptHandler = () => "hello from herald";
  let counter = 0;

  const send = (
    res: ServerResponse,
    status: number,
    body: Buffer | string,
    headers: Record<string, string>,
  ) => {
    res.writeHead(status, { "content-length": Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const sendError = (
    res: ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
  ) =>
    send(res, status, JSON.stringify({ error: { message, type: "fake_error" } }), {
      "content-type": "application/json",
      ...headers,
    });

  async function handleTranscription(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: "POST",
      headers: req.headers as Record<string, string>,
      body: Readable.toWeb(req) as ReadableStream,
      duplex: "half",
    } as RequestInit);
    const form = await request.formData();
    const file = form.get("file");
    if (!(file instanceof File)) return sendError(res, 400, "file is required");
    const bytes = Buffer.from(await file.arrayBuffer());
    const path = join(workDir, `upload-${counter++}-${file.name.replace(/[^\w.-]/g, "_")}`);
    await writeFile(path, bytes);
    const probe = await ffprobe(path).catch((err: Error) => ({ error: err.message }));
    await rm(path, { force: true });
    const field = (name: string) => {
      const v = form.get(name);
      return typeof v === "string" ? v : undefined;
    };
    const recorded: RecordedTranscription = {
      model: field("model") ?? "",
      filename: file.name,
      mimeType: file.type,
      bytes,
      language: field("language"),
      prompt: field("prompt"),
      responseFormat: field("response_format"),
      authorization: req.headers.authorization,
      probe,
    };
    transcriptions.push(recorded);
    if ("error" in probe) return sendError(res, 400, `Invalid file format: ${probe.error}`);
    if (!recorded.model) return sendError(res, 400, "model is required");
    const text = transcript(recorded, transcriptions.length - 1);
    send(res, 200, JSON.stringify({ text }), { "content-type": "application/json" });
  }

  async function handleSpeech(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    const { model, input, voice } = body;
    const format = typeof body.response_format === "string" ? body.response_format : "mp3";
    if (typeof model !== "string" || typeof input !== "string" || typeof voice !== "string")
      return sendError(res, 400, "model, input and voice are required");
    if (input.length > 4096) return sendError(res, 400, "input is longer than 4096 characters");
    const id = counter++;
    const wav = await espeak(input, join(workDir, `tts-${id}.wav`), 450);
    const codec: Record<string, string[]> = {
      mp3: ["-c:a", "libmp3lame", "-b:a", "48k", "-f", "mp3"],
      opus: ["-c:a", "libopus", "-b:a", "32k", "-f", "ogg"],
      wav: ["-c:a", "pcm_s16le", "-f", "wav"],
    };
    const args = codec[format];
    if (!args) return sendError(res, 400, `response_format ${format} is not supported by the fake`);
    const out = join(workDir, `tts-${id}-out.${format}`);
    await ffmpeg(["-i", wav, ...args, out]);
    const audio = await readFile(out);
    const { durationS } = await ffprobe(out);
    await Promise.all([rm(wav, { force: true }), rm(out, { force: true })]);
    speeches.push({ model, input, voice, responseFormat: format, durationS });
    const mime = format === "mp3" ? "audio/mpeg" : format === "opus" ? "audio/ogg" : "audio/wav";
    send(res, 200, audio, { "content-type": mime });
  }

  const stalls: number[] = [];
  const server = createServer(async (req, res) => {
    const startedAt = performance.now();
    const stallMs = stalls.shift();
    if (stallMs !== undefined) await new Promise((resolve) => setTimeout(resolve, stallMs));
    res.on("finish", () =>
      log.push({ path: req.url ?? "", status: res.statusCode, serverMs: performance.now() - startedAt }),
    );
    const failure = failures[0];
    if (failure) {
      if (--failure.times <= 0) failures.shift();
      req.resume();
      const headers: Record<string, string> = {};
      if (failure.retryAfterS !== undefined) headers["retry-after"] = String(failure.retryAfterS);
      return sendError(res, failure.status, failure.message, headers);
    }
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      req.resume();
      return sendError(res, 401, "Incorrect API key provided");
    }
    const route =
      req.method === "POST" && req.url === "/v1/audio/transcriptions"
        ? handleTranscription
        : req.method === "POST" && req.url === "/v1/audio/speech"
          ? handleSpeech
          : undefined;
    if (!route) {
      req.resume();
      return sendError(res, 404, `no route ${req.method} ${req.url}`);
    }
    route(req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, `fake failed: ${err.message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    transcriptions,
    speeches,
    log,
    fail(failure) {
      failures.push({
        status: failure.status,
        times: failure.times ?? 1,
        message: failure.message ?? `scripted ${failure.status}`,
        retryAfterS: failure.retryAfterS,
      });
    },
    stall(delayMs) {
      stalls.push(delayMs);
    },
    onTranscribe(handler) {
      transcript = handler;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(workDir, { recursive: true, force: true });
    },
  };
}
