/**
 * Audio helpers of the fake speech server and the voice tests: the real tools (espeak-ng, ffmpeg,
 * ffprobe) run directly, independent of the code under test.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What ffprobe says of a file's first audio stream. */
export interface ProbedAudio {
  container: string;
  codec: string;
  sampleRate: number;
  channels: number;
  durationS: number;
}

/** ffprobe of `path`; rejects when the file is not audio. */
export async function ffprobe(path: string): Promise<ProbedAudio> {
  const { stdout } = await run("ffprobe", [
    ...["-v", "error", "-print_format", "json", "-show_format", "-show_streams", path],
  ]);
  const data = JSON.parse(stdout) as {
    streams?: { codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number }[];
    format?: { format_name?: string; duration?: string };
  };
  const audio = data.streams?.find((s) => s.codec_type === "audio");
  if (!audio?.codec_name) throw new Error(`${path}: no audio stream`);
  return {
    container: data.format?.format_name ?? "",
    codec: audio.codec_name,
    sampleRate: Number(audio.sample_rate ?? 0),
    channels: audio.channels ?? 0,
    durationS: Number(data.format?.duration ?? Number.NaN),
  };
}

/** Speaks `text` with espeak-ng into a WAV file at `wavPath`. */
export async function espeak(text: string, wavPath: string, wordsPerMinute = 175): Promise<string> {
  await run("espeak-ng", ["-s", String(wordsPerMinute), "-w", wavPath, text], { maxBuffer: 1 << 20 });
  return wavPath;
}

/** Runs ffmpeg quietly with `args`. */
export async function ffmpeg(args: string[]): Promise<void> {
  await run("ffmpeg", ["-nostdin", "-v", "error", "-y", ...args]);
}

/** A real voice note as Telegram and WhatsApp send it: espeak-ng speech in Ogg/Opus at 24 kbit/s. */
export async function makeVoiceNote(dir: string, text = "hello from herald", name = "note"): Promise<string> {
  const wav = await espeak(text, join(dir, `${name}.wav`));
  const ogg = join(dir, `${name}.ogg`);
  await ffmpeg(["-i", wav, "-c:a", "libopus", "-b:a", "24k", ogg]);
  return ogg;
}

/**
 * Long audio kept small: `text` spoken, then silence (`anullsrc`) up to `durationS`, as 8 kHz mono MP3
 * at 8 kbit/s (~1 MB per 17 minutes; encodes in well under a second).
 */
export async function makeLongAudio(
  dir: string,
  durationS: number,
  text = "hello from herald",
): Promise<string> {
  const wav = await espeak(text, join(dir, "long-speech.wav"));
  const out = join(dir, `long-${durationS}.mp3`);
  await ffmpeg([
    ...["-i", wav, "-f", "lavfi", "-i", `anullsrc=r=8000:cl=mono:d=${durationS}`],
    ...["-filter_complex", "[0:a]aresample=8000,aformat=channel_layouts=mono[s];[s][1:a]concat=n=2:v=0:a=1"],
    ...["-t", String(durationS), "-c:a", "libmp3lame", "-b:a", "8k", out],
  ]);
  return out;
}
