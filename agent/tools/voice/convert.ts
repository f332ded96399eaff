/**
 * Audio conversions with ffmpeg and probing with ffprobe. Argument arrays, no shell; every call has a
 * timeout and takes an AbortSignal.
 */
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { HeraldError } from "../../../core/errors.js";
import { installHint, runTool } from "./process.js";
import type { AudioInfo, AudioTools, VoiceNoteFormat } from "./types.js";

/** Options shared by the conversions. */
export interface ConvertOptions extends AudioTools {
  /** @defaultValue 60_000 for a probe-sized job, 300_000 for a conversion */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const probeSchema = z.object({
  streams: z
    .array(
      z.object({
        codec_type: z.string().optional(),
        codec_name: z.string().optional(),
        sample_rate: z.coerce.number().optional(),
        channels: z.number().optional(),
      }),
    )
    .default([]),
  format: z.object({ format_name: z.string().optional(), duration: z.coerce.number().optional() }).optional(),
});

/**
 * Reads duration, codec and sample rate of the first audio stream with `ffprobe -of json`.
 * Rejects with `invalid_input` when the file is not audio ffprobe can read, `config_missing` without ffprobe.
 */
export async function probeAudio(inputPath: string, options: ConvertOptions = {}): Promise<AudioInfo> {
  const args = ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", inputPath];
  let stdout: string;
  try {
    ({ stdout } = await runTool(options.ffprobePath ?? "ffprobe", args, {
      timeoutMs: options.timeoutMs ?? 60_000,
      signal: options.signal,
    }));
  } catch (err) {
    if (err instanceof HeraldError && err.code === "tool_error")
      throw new HeraldError(`${inputPath} is not an audio file ffprobe can read (${err.message})`, {
        code: "invalid_input",
        cause: err,
      });
    throw err;
  }
  const parsed = probeSchema.safeParse(JSON.parse(stdout));
  const audio = parsed.success ? parsed.data.streams.find((s) => s.codec_type === "audio") : undefined;
  if (!parsed.success || !audio?.codec_name)
    throw new HeraldError(`${inputPath} has no audio stream`, { code: "invalid_input" });
  const duration = parsed.data.format?.duration;
  return {
    durationS: duration !== undefined && Number.isFinite(duration) ? duration : undefined,
    codec: audio.codec_name,
    sampleRate: audio.sample_rate ?? 0,
    channels: audio.channels ?? 0,
    container: parsed.data.format?.format_name ?? "",
  };
}

/** ffmpeg output arguments per voice-note format. Mono speech bitrates: a voice note is speech. */
const FORMAT_ARGS: Record<VoiceNoteFormat, { ext: string; args: string[] }> = {
  // Telegram sendVoice and WhatsApp PTT play Ogg/Opus as a voice note; 48 kHz is Opus's native rate.
  "ogg-opus": {
    ext: "ogg",
    args: ["-c:a", "libopus", "-b:a", "32k", "-ac", "1", "-ar", "48000", "-application", "voip", "-f", "ogg"],
  },
  mp3: { ext: "mp3", args: ["-c:a", "libmp3lame", "-b:a", "64k", "-ac", "1", "-ar", "44100", "-f", "mp3"] },
  // `ipod` is ffmpeg's muxer for .m4a; faststart lets players begin before the whole file arrived.
  m4a: {
    ext: "m4a",
    args: ["-c:a", "aac", "-b:a", "64k", "-ac", "1", "-ar", "44100", "-movflags", "+faststart", "-f", "ipod"],
  },
};

/**
 * Converts any audio ffmpeg reads into a voice note of `format` and resolves with the new file's path
 * (in `outPath`, or a fresh name in the OS temp folder; the caller deletes it). Video and cover art are
 * dropped, metadata stripped. Rejects with `config_missing` without ffmpeg, `tool_error` when ffmpeg fails.
 */
export async function toVoiceNote(
  inputPath: string,
  options: ConvertOptions & { format: VoiceNoteFormat; outPath?: string },
): Promise<string> {
  const spec = FORMAT_ARGS[options.format];
  const outPath = options.outPath ?? join(tmpdir(), `herald-voice-${randomUUID()}.${spec.ext}`);
  const args = ["-nostdin", "-v", "error", "-y", "-i", inputPath, "-vn", "-map_metadata", "-1", ...spec.args];
  await runTool(options.ffmpegPath ?? "ffmpeg", [...args, outPath], {
    timeoutMs: options.timeoutMs ?? 300_000,
    signal: options.signal,
  });
  return outPath;
}

/** Whether ffmpeg and ffprobe run; `message` is doctor's line when they do not. */
export type FfmpegStatus = { ok: true; version: string } | { ok: false; message: string };

/**
 * Checks that ffmpeg and ffprobe start (`-version`). Never throws. Without them Herald still transcribes
 * voice notes the provider accepts as they are (Ogg/Opus, MP3, M4A, WAV under the size limit) and sends
 * voice replies as the provider's MP3 files; it cannot convert, split long audio or send Ogg voice notes.
 */
export async function ffmpegAvailable(options: ConvertOptions = {}): Promise<FfmpegStatus> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const fallback = "voice replies are sent as MP3 files without it";
  try {
    const { stdout } = await runTool(options.ffmpegPath ?? "ffmpeg", ["-hide_banner", "-version"], {
      timeoutMs,
      signal: options.signal,
    });
    await runTool(options.ffprobePath ?? "ffprobe", ["-hide_banner", "-version"], {
      timeoutMs,
      signal: options.signal,
    });
    const version = /version (\S+)/.exec(stdout)?.[1] ?? "unknown";
    return { ok: true, version };
  } catch (err) {
    if (err instanceof HeraldError && err.code === "config_missing")
      return { ok: false, message: `${err.message}; ${fallback}` };
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, message: `${installHint("ffmpeg")} (${why}); ${fallback}` };
  }
}
