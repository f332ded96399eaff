/** Contracts of the voice module: speech to text, text to speech, and the audio conversions around them. */
import type { Logger } from "../../../core/logger.js";

/** Where the audio tools live. Defaults resolve `ffmpeg` and `ffprobe` on PATH. */
export interface AudioTools {
  /** @defaultValue "ffmpeg" */
  ffmpegPath?: string;
  /** @defaultValue "ffprobe" */
  ffprobePath?: string;
}

/** What ffprobe says about an audio file (the first audio stream). */
export interface AudioInfo {
  /** Container duration in seconds; `undefined` when the container does not say. */
  durationS: number | undefined;
  /** ffprobe's codec name: `opus`, `mp3`, `aac`, `pcm_s16le`, … */
  codec: string;
  /** Samples per second of the audio stream. */
  sampleRate: number;
  /** Channels of the audio stream. */
  channels: number;
  /** ffprobe's container name, e.g. `ogg`, `mp3`, `mov,mp4,m4a,3gp,3g2,mj2`, `wav`. */
  container: string;
}

/**
 * Formats a platform wants for a voice reply: `ogg-opus` for Telegram sendVoice and WhatsApp PTT
 * (Ogg/Opus, mono, 48 kHz); `mp3` or `m4a` as an audio file for Discord, Slack, Matrix and email.
 */
export type VoiceNoteFormat = "ogg-opus" | "mp3" | "m4a";

/** An OpenAI-compatible endpoint (OpenAI, Groq, a self-hosted Whisper or TTS server). */
export interface SpeechEndpoint {
  /** Base URL up to and including the version, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set; self-hosted servers often need none. */
  apiKey?: string;
  /** Model name, e.g. `whisper-1`, `whisper-large-v3-turbo`, `gpt-4o-mini-tts`. */
  model: string;
  /** The config key errors name when the provider refuses the key. @defaultValue "voice.stt.apiKey" / "voice.tts.apiKey" */
  apiKeyName?: string;
  /** One HTTP attempt (upload and answer) may take this long. @defaultValue 120_000 */
  timeoutMs?: number;
  /** Attempts per request on 429, 5xx, timeouts and network errors. @defaultValue 3 */
  maxAttempts?: number;
  /** First backoff delay when the provider sent no retry-after; doubled each attempt. @defaultValue 500 */
  retryBaseDelayMs?: number;
  /** A retry-after longer than this is not waited for: the retryable error is thrown. @defaultValue 30_000 */
  maxRetryDelayMs?: number;
  /** Debug lines (request sizes, retries); never the key. */
  logger?: Logger;
}

/** The text a transcription produced. */
export interface Transcript {
  /** The whole transcript; chunks joined with a space, in order. */
  text: string;
  /** Duration of the input in seconds, when ffprobe could tell. */
  durationS: number | undefined;
  /** Requests it took: 1, or the number of ~10-minute chunks. */
  chunks: number;
}

/** Per-call options of a transcription. */
export interface TranscribeCallOptions {
  /** ISO-639-1 language of the audio (`en`, `de`); the provider detects it when unset. */
  language?: string;
  /** Vocabulary or style hint sent as `prompt` with the first chunk. */
  prompt?: string;
  signal?: AbortSignal;
}

/** Per-call options of speech synthesis. */
export interface SpeakCallOptions {
  /** Voice name; defaults to the configured one. */
  voice?: string;
  signal?: AbortSignal;
}
