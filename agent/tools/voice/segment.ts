/**
 * Cutting long audio into chunks and joining synthesized parts, both with ffmpeg. Chunks of audio a
 * provider accepts are cut without re-encoding (fast, lossless); other audio is re-encoded to speech-grade
 * Ogg/Opus on the way.
 */
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runTool } from "./process.js";
import type { AudioTools } from "./types.js";

/** Options of {@link splitAudio}. */
export interface SplitOptions extends AudioTools {
  /** Folder the chunks are written to (the caller creates and removes it). */
  outDir: string;
  /** Target chunk length; ffmpeg cuts at the next packet boundary. */
  chunkDurationS: number;
  /** Extension of the input's container (`ogg`, `mp3`, …) to copy into, or `undefined` to re-encode. */
  copyAs: string | undefined;
  /** @defaultValue 300_000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Ogg/Opus, mono, 16 kHz, 24 kbit/s: what Whisper hears anyway (it resamples to 16 kHz mono), at
 * ~1.8 MB per 10 minutes, far under any provider's upload limit.
 */
export const SPEECH_OPUS_ARGS = [
  "-c:a",
  "libopus",
  "-b:a",
  "24k",
  "-ac",
  "1",
  "-ar",
  "16000",
  "-application",
  "voip",
];

/**
 * Cuts `inputPath` into consecutive chunks of about `chunkDurationS` seconds and resolves with their
 * paths in playing order. Rejects with a HeraldError (`tool_error`, `config_missing`) when ffmpeg fails.
 */
export async function splitAudio(inputPath: string, options: SplitOptions): Promise<string[]> {
  const ext = options.copyAs ?? "ogg";
  const codec = options.copyAs ? ["-c:a", "copy"] : SPEECH_OPUS_ARGS;
  const args = [
    ...["-nostdin", "-v", "error", "-y", "-i", inputPath, "-vn", "-map", "0:a:0", "-map_metadata", "-1"],
    ...codec,
    ...["-f", "segment", "-segment_time", String(options.chunkDurationS), "-reset_timestamps", "1"],
    join(options.outDir, `chunk-%04d.${ext}`),
  ];
  await runTool(options.ffmpegPath ?? "ffmpeg", args, {
    timeoutMs: options.timeoutMs ?? 300_000,
    signal: options.signal,
  });
  const names = (await readdir(options.outDir)).filter((n) => n.startsWith("chunk-")).sort();
  return names.map((n) => join(options.outDir, n));
}

/** Re-encodes `inputPath` whole to speech-grade Ogg/Opus at `outPath` (audio the provider may refuse). */
export async function toSpeechOpus(
  inputPath: string,
  outPath: string,
  options: AudioTools & { timeoutMs?: number; signal?: AbortSignal },
): Promise<string> {
  const args = [
    "-nostdin",
    "-v",
    "error",
    "-y",
    "-i",
    inputPath,
    "-vn",
    "-map",
    "0:a:0",
    "-map_metadata",
    "-1",
  ];
  await runTool(options.ffmpegPath ?? "ffmpeg", [...args, ...SPEECH_OPUS_ARGS, "-f", "ogg", outPath], {
    timeoutMs: options.timeoutMs ?? 300_000,
    signal: options.signal,
  });
  return outPath;
}

/**
 * Joins audio files of one codec and format (the parts of one synthesis) into `outPath` with ffmpeg's
 * concat demuxer, without re-encoding. `listDir` receives the list file.
 */
export async function concatAudio(
  parts: readonly string[],
  outPath: string,
  options: AudioTools & { listDir: string; timeoutMs?: number; signal?: AbortSignal },
): Promise<string> {
  const listPath = join(options.listDir, "concat.txt");
  // The concat list quotes paths in single quotes; a quote inside is written as '\''.
  const list = parts.map((p) => `file '${p.replaceAll("'", "'\\''")}'`).join("\n");
  await writeFile(listPath, `${list}\n`);
  const args = ["-nostdin", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", listPath, "-c", "copy"];
  await runTool(options.ffmpegPath ?? "ffmpeg", [...args, outPath], {
    timeoutMs: options.timeoutMs ?? 300_000,
    signal: options.signal,
  });
  return outPath;
}
