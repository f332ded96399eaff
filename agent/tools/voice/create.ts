/** `createVoice(config)`: the configured speech abilities, transcription and speech, with ffmpeg beside them. */
import type { Logger } from "../../../core/logger.js";
import { parseVoiceConfig, type VoiceConfig } from "./config.js";
import { probeAudio, toVoiceNote } from "./convert.js";
import { speak } from "./speak.js";
import { transcribe } from "./transcribe.js";
import type {
  AudioInfo,
  AudioTools,
  SpeakCallOptions,
  TranscribeCallOptions,
  Transcript,
  VoiceNoteFormat,
} from "./types.js";

/**
 * The configured voice abilities. `transcribe` exists when `stt` is configured, `speak` when `tts` is;
 * callers check (`voice.transcribe?.(path)`). Each rejects as the function of the same name does.
 */
export interface Voice {
  /** Transcribes an audio file (a voice note, a recording) to text. */
  transcribe?: (inputPath: string, options?: TranscribeCallOptions) => Promise<Transcript>;
  /** Synthesizes text into an audio file and resolves with its path (the caller deletes it). */
  speak?: (text: string, options?: SpeakCallOptions) => Promise<string>;
  /** Converts audio into the format a platform wants; resolves with the new file's path. */
  toVoiceNote: (inputPath: string, format: VoiceNoteFormat, signal?: AbortSignal) => Promise<string>;
  /** Duration, codec and sample rate of an audio file. */
  probeAudio: (inputPath: string, signal?: AbortSignal) => Promise<AudioInfo>;
}

/** What {@link createVoice} needs besides the configuration. */
export interface VoiceDeps extends AudioTools {
  logger?: Logger;
  /** The path errors name keys under. @defaultValue "voice" */
  keyPrefix?: string;
}

/**
 * Builds the voice abilities from the raw `voice` configuration section (validated here; throws a
 * ConfigError naming the bad key and the fix).
 */
export function createVoice(config: unknown, deps: VoiceDeps = {}): Voice {
  const prefix = deps.keyPrefix ?? "voice";
  const parsed: VoiceConfig = parseVoiceConfig(config, prefix);
  const tools: AudioTools = { ffmpegPath: deps.ffmpegPath, ffprobePath: deps.ffprobePath };
  const voice: Voice = {
    toVoiceNote: (inputPath, format, signal) => toVoiceNote(inputPath, { ...tools, format, signal }),
    probeAudio: (inputPath, signal) => probeAudio(inputPath, { ...tools, signal }),
  };
  const { stt, tts } = parsed;
  if (stt) {
    const options = {
      ...stt,
      ...tools,
      apiKeyName: `${prefix}.stt.apiKey`,
      maxTotalDurationName: `${prefix}.stt.maxTotalDurationS`,
      logger: deps.logger?.child({ part: "stt" }),
    };
    voice.transcribe = (inputPath, call = {}) =>
      transcribe(inputPath, options, { ...call, language: call.language ?? stt.language });
  }
  if (tts) {
    const options = {
      ...tts,
      ...tools,
      apiKeyName: `${prefix}.tts.apiKey`,
      logger: deps.logger?.child({ part: "tts" }),
    };
    voice.speak = (text, call = {}) => speak(text, options, call);
  }
  return voice;
}
