/**
 * Text to speech over the OpenAI-compatible `POST {baseUrl}/audio/speech`. Text over the provider's
 * input limit is split between sentences, each piece synthesized, and the audio joined into one file.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import { SPEECH_FORMATS, type SpeechFormat } from "./config.js";
import { postSpeech } from "./http.js";
import { concatAudio } from "./segment.js";
import { splitForSpeech } from "./sentences.js";
import type { AudioTools, SpeakCallOptions, SpeechEndpoint } from "./types.js";

export { SPEECH_FORMATS, type SpeechFormat };

/** Options of {@link speak}: the endpoint, the voice and the provider's input limit. */
export interface SpeakOptions extends SpeechEndpoint, AudioTools {
  /** Voice name, e.g. `alloy`. */
  voice: string;
  /** @defaultValue "mp3" */
  format?: SpeechFormat;
  /** The provider's input limit per request, in characters. @defaultValue 4096 */
  maxInputChars?: number;
  /** Pieces synthesized at the same time. @defaultValue 2 */
  concurrency?: number;
  /** Folder of the result file. @defaultValue the OS temp folder */
  outDir?: string;
  /** ffmpeg's concat may take this long. @defaultValue 120_000 */
  toolTimeoutMs?: number;
}

/**
 * Synthesizes `text` and resolves with the path of one audio file in `format` (the caller deletes it).
 * Rejects with `invalid_input` for empty text, a ModelError from the provider (see `postSpeech`),
 * `config_missing` when several pieces must be joined in a format other than MP3 without ffmpeg;
 * with `signal.reason` when aborted. Partial files are removed on failure.
 */
export async function speak(
  text: string,
  options: SpeakOptions,
  call: SpeakCallOptions = {},
): Promise<string> {
  const format = options.format ?? "mp3";
  const pieces = splitForSpeech(text, options.maxInputChars ?? 4096);
  if (pieces.length === 0) throw new HeraldError("there is no text to speak", { code: "invalid_input" });
  const outPath = join(options.outDir ?? tmpdir(), `herald-speech-${randomUUID()}.${SPEECH_FORMATS[format]}`);
  const synth = async (input: string) => {
    options.logger?.debug({ chars: input.length, format }, "speech request");
    const res = await postSpeech(options, {
      path: "/audio/speech",
      what: "speech synthesis",
      signal: call.signal,
      headers: { "content-type": "application/json" },
      body: () =>
        JSON.stringify({
          model: options.model,
          input,
          voice: call.voice ?? options.voice,
          response_format: format,
        }),
    });
    return Buffer.from(await res.arrayBuffer());
  };
  if (pieces.length === 1) {
    await writeFile(outPath, await synth(pieces[0] ?? ""));
    return outPath;
  }
  const workDir = await mkdtemp(join(tmpdir(), "herald-tts-"));
  try {
    const audio = await mapLimit(pieces, options.concurrency ?? 2, synth);
    const parts = await Promise.all(
      audio.map(async (bytes, i) => {
        const path = join(workDir, `part-${String(i).padStart(4, "0")}.${SPEECH_FORMATS[format]}`);
        await writeFile(path, bytes);
        return path;
      }),
    );
    await joinParts(parts, outPath, format, { ...options, listDir: workDir, signal: call.signal });
    return outPath;
  } catch (err) {
    await rm(outPath, { force: true });
    throw err;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Joins the parts with ffmpeg; without it MP3 parts are joined by bytes (MP3 is a stream of frames). */
async function joinParts(
  parts: string[],
  outPath: string,
  format: SpeechFormat,
  options: SpeakOptions & { listDir: string; signal: AbortSignal | undefined },
): Promise<void> {
  try {
    await concatAudio(parts, outPath, { ...options, timeoutMs: options.toolTimeoutMs ?? 120_000 });
  } catch (err) {
    if (!(err instanceof HeraldError && err.code === "config_missing")) throw err;
    if (format !== "mp3")
      throw new HeraldError(`joining ${format} speech needs ffmpeg: apt-get install ffmpeg, or ask for mp3`, {
        code: "config_missing",
        cause: err,
      });
    options.logger?.warn({ parts: parts.length }, "ffmpeg missing, joining mp3 parts by bytes");
    await writeFile(outPath, Buffer.concat(await Promise.all(parts.map((p) => readFile(p)))));
  }
}

/** `items.map(fn)` with at most `limit` calls running; results in input order; the first failure rejects. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
