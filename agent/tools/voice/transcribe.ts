/**
 * Speech to text over the OpenAI-compatible `POST {baseUrl}/audio/transcriptions` (OpenAI, Groq,
 * self-hosted Whisper servers). Audio the provider accepts is sent as it is; other audio is converted to
 * Ogg/Opus; audio over the provider's limit is cut into ~10-minute chunks transcribed in order; audio over
 * the hard cap is refused before anything is uploaded.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { describeError, HeraldError, ModelError } from "../../../core/errors.js";
import { probeAudio } from "./convert.js";
import { postSpeech } from "./http.js";
import { oggOpusDurationS } from "./ogg.js";
import { splitAudio, toSpeechOpus } from "./segment.js";
import { type SendableFormat, sniffFile } from "./sniff.js";
import type { AudioInfo, AudioTools, SpeechEndpoint, TranscribeCallOptions, Transcript } from "./types.js";

/** Options of {@link transcribe}: the endpoint, the provider's limits and the hard cap. */
export interface TranscribeOptions extends SpeechEndpoint, AudioTools {
  /** The provider's upload limit per request. @defaultValue 25_000_000 (OpenAI and Groq: 25 MB) */
  maxBytes?: number;
  /** The provider's duration limit per request, when it has one; longer audio is chunked. */
  maxDurationS?: number;
  /** Length of the chunks long audio is cut into. @defaultValue 600 */
  chunkDurationS?: number;
  /** Longer audio is refused before any upload (cost and latency bound). @defaultValue 7_200 */
  maxTotalDurationS?: number;
  /** Config key named when audio is refused for its length. @defaultValue "voice.stt.maxTotalDurationS" */
  maxTotalDurationName?: string;
  /** ffmpeg/ffprobe runs may take this long each. @defaultValue 300_000 */
  toolTimeoutMs?: number;
}

/** The provider answers `{ "text": … }` for `response_format=json`; extra fields are ignored. */
const transcriptionSchema = z.object({ text: z.string() });

/** Characters of the previous chunk's text sent as the next chunk's prompt (continuity across cuts). */
const PROMPT_TAIL_CHARS = 200;

/** One file to upload and the name and type it goes under. */
interface Upload {
  path: string;
  format: SendableFormat;
}

const OGG: SendableFormat = { ext: "ogg", mime: "audio/ogg" };

/**
 * Transcribes the audio file at `inputPath` and resolves with its text.
 * Rejects with a HeraldError: `invalid_input` (not audio, over the hard cap, a chunk over `maxBytes`),
 * `config_missing` (ffmpeg needed but absent), or a ModelError from the provider (see `postSpeech`);
 * with `signal.reason` when aborted. Temporary chunks are removed in every case.
 */
export async function transcribe(
  inputPath: string,
  options: TranscribeOptions,
  call: TranscribeCallOptions = {},
): Promise<Transcript> {
  const { signal } = call;
  const maxBytes = options.maxBytes ?? 25_000_000;
  const tool = { ...options, timeoutMs: options.toolTimeoutMs ?? 300_000, signal };
  const [{ size }, sendable] = await Promise.all([stat(inputPath), sniffFile(inputPath)]).catch(
    (err: unknown) => {
      throw new HeraldError(`cannot read the audio file ${inputPath}: ${describeError(err)}`, {
        code: "invalid_input",
        cause: err,
      });
    },
  );
  // An Ogg/Opus voice note's duration is read in process; anything else is probed with ffprobe.
  const oggS = sendable?.ext === "ogg" ? await oggOpusDurationS(inputPath) : undefined;
  const info = oggS === undefined ? await probeOrNothing(inputPath, tool, sendable) : undefined;
  const durationS = oggS ?? info?.durationS;
  const capS = options.maxTotalDurationS ?? 7_200;
  if (durationS !== undefined && durationS > capS)
    throw new HeraldError(
      `the audio is ${formatMinutes(durationS)} long; Herald transcribes at most ${formatMinutes(capS)} ` +
        `(raise ${options.maxTotalDurationName ?? "voice.stt.maxTotalDurationS"} to allow longer audio)`,
      { code: "invalid_input" },
    );
  const limitS = Math.min(options.chunkDurationS ?? 600, options.maxDurationS ?? Number.POSITIVE_INFINITY);
  const overDuration =
    durationS !== undefined && options.maxDurationS !== undefined && durationS > options.maxDurationS;
  if (sendable && size <= maxBytes && !overDuration) {
    const text = await transcribeOne({ path: inputPath, format: sendable }, options, call, call.prompt);
    return { text, durationS, chunks: 1 };
  }
  // No probe and no Ogg duration: ffprobe is missing, so ffmpeg (same package) is too.
  if (!info && oggS === undefined)
    throw new HeraldError(
      `${inputPath} needs converting or splitting before upload, which needs ffmpeg: apt-get install ffmpeg`,
      { code: "config_missing" },
    );
  const workDir = await mkdtemp(join(tmpdir(), "herald-stt-"));
  try {
    const uploads = await prepare(inputPath, { size, durationS, sendable, limitS, maxBytes, workDir }, tool);
    const texts: string[] = [];
    for (const upload of uploads) {
      const previous = texts.at(-1);
      const prompt = previous ? previous.slice(-PROMPT_TAIL_CHARS) : call.prompt;
      texts.push((await transcribeOne(upload, options, call, prompt)).trim());
    }
    return { text: texts.filter(Boolean).join(" "), durationS, chunks: uploads.length };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** ffprobe's view of the file, or `undefined` when ffprobe is absent but the file can go as it is. */
async function probeOrNothing(
  path: string,
  tool: AudioTools & { timeoutMs: number; signal: AbortSignal | undefined },
  sendable: SendableFormat | undefined,
): Promise<AudioInfo | undefined> {
  try {
    return await probeAudio(path, tool);
  } catch (err) {
    if (sendable && err instanceof HeraldError && err.code === "config_missing") return undefined;
    throw err;
  }
}

/** Converts or cuts the input into uploads that each fit the provider's limits, in playing order. */
async function prepare(
  inputPath: string,
  input: {
    size: number;
    durationS: number | undefined;
    sendable: SendableFormat | undefined;
    limitS: number;
    maxBytes: number;
    workDir: string;
  },
  tool: AudioTools & { timeoutMs: number; signal: AbortSignal | undefined },
): Promise<Upload[]> {
  const { durationS, sendable, limitS, maxBytes, workDir } = input;
  let uploads: Upload[];
  if (durationS === undefined || durationS <= limitS) {
    uploads = [{ path: await toSpeechOpus(inputPath, join(workDir, "whole.ogg"), tool), format: OGG }];
  } else {
    // Cutting without re-encoding is ~20x faster; it is safe when the chunks of this bitrate fit.
    const chunkBytes = (input.size / durationS) * limitS;
    const copy = sendable && sendable.ext !== "m4a" && chunkBytes <= maxBytes * 0.9 ? sendable : undefined;
    const paths = await splitAudio(inputPath, {
      ...tool,
      outDir: workDir,
      chunkDurationS: limitS,
      copyAs: copy?.ext,
    });
    uploads = paths.map((path) => ({ path, format: copy ?? OGG }));
  }
  for (const upload of uploads) {
    const { size } = await stat(upload.path);
    if (size > maxBytes)
      throw new HeraldError(
        `a chunk of ${inputPath} is ${size} bytes, over the provider's ${maxBytes}-byte limit even as Ogg/Opus; ` +
          "lower voice.stt.chunkDurationS",
        { code: "invalid_input" },
      );
  }
  return uploads;
}

/** Uploads one file and returns its text. */
async function transcribeOne(
  upload: Upload,
  endpoint: SpeechEndpoint,
  call: TranscribeCallOptions,
  prompt: string | undefined,
): Promise<string> {
  const bytes = await readFile(upload.path);
  const file = new Blob([bytes], { type: upload.format.mime });
  endpoint.logger?.debug({ bytes: bytes.length, format: upload.format.ext }, "transcription request");
  const res = await postSpeech(endpoint, {
    path: "/audio/transcriptions",
    what: "transcription",
    signal: call.signal,
    body: () => {
      const form = new FormData();
      // The provider tells the format by the file name's extension, so it names what the bytes are.
      form.append("file", file, `audio.${upload.format.ext}`);
      form.append("model", endpoint.model);
      form.append("response_format", "json");
      if (call.language) form.append("language", call.language);
      if (prompt) form.append("prompt", prompt);
      return form;
    },
  });
  const body: unknown = await res.json().catch((err: unknown) => {
    if (call.signal?.aborted) throw call.signal.reason;
    throw new ModelError(`${endpoint.baseUrl} answered the transcription with a body that is not JSON`, {
      cause: err,
    });
  });
  const parsed = transcriptionSchema.safeParse(body);
  if (!parsed.success)
    throw new ModelError(`${endpoint.baseUrl} answered the transcription without a "text" field`, {
      cause: parsed.error,
    });
  return parsed.data.text;
}

function formatMinutes(seconds: number): string {
  return `${(seconds / 60).toFixed(1)} min`;
}
