/**
 * A spoken reply for one platform: the text synthesized over `/audio/speech`, in the form the platform
 * plays best. Telegram and WhatsApp get an Ogg/Opus voice note (asked of the provider as `opus`, or
 * converted with ffmpeg when the configured format is another); the others an audio file (MP3 unless
 * `voice.tts.format` says otherwise).
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { OutboundFile } from "../../../core/types.js";
import type { VoiceConfig } from "./config.js";
import { toVoiceNote } from "./convert.js";
import { SPEECH_FORMATS, type SpeechFormat, speak } from "./speak.js";
import type { AudioTools } from "./types.js";

/** Platforms with a voice-note message type (Ogg/Opus): Telegram sendVoice, WhatsApp PTT. */
export const VOICE_NOTE_PLATFORMS: ReadonlySet<string> = new Set(["telegram", "whatsapp"]);

const MIME_TYPES: Record<SpeechFormat, string> = {
  mp3: "audio/mpeg",
  opus: "audio/ogg",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
};

/** Per-call options of {@link SpokenReplies.speak}. */
export interface SpokenReplyOptions {
  /** The platform the file is for (`telegram`, `discord`, `api`, …). */
  platform: string;
  /** Voice name; defaults to `voice.tts.voice`. */
  voice?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** Synthesizes replies into files under one folder. */
export interface SpokenReplies {
  /**
   * Synthesizes `text` into a file for `options.platform` and resolves with it as an outbound file
   * (`voice: true` when it is a voice note). Rejects as `speak` does (`invalid_input` for empty text, a
   * ModelError from the provider); a missing ffmpeg is not an error: the provider's file goes as audio.
   */
  speak(text: string, options: SpokenReplyOptions): Promise<OutboundFile>;
}

/** What {@link createSpokenReplies} needs. */
export interface SpokenRepliesDeps extends AudioTools {
  /** Folder of the files (shared with the gateway, which sends them): `HERALD_HOME/cache/speech`. */
  outDir: string;
  logger?: Logger | undefined;
}

/**
 * Spoken replies are pruned with the rest of HERALD_HOME/cache by the housekeeping pass
 * (agent/exec/housekeeping.ts): after media.retention_days, never one an undelivered reply still carries.
 */
/** Builds spoken replies on the validated `voice.tts` section. */
export function createSpokenReplies(
  tts: NonNullable<VoiceConfig["tts"]>,
  deps: SpokenRepliesDeps,
): SpokenReplies {
  const tools: AudioTools = { ffmpegPath: deps.ffmpegPath, ffprobePath: deps.ffprobePath };
  return {
    async speak(text, options) {
      const wantsNote = VOICE_NOTE_PLATFORMS.has(options.platform);
      const format: SpeechFormat = tts.format ?? (wantsNote ? "opus" : "mp3");
      await mkdir(deps.outDir, { recursive: true });
      const path = await speak(
        text,
        {
          ...tts,
          ...tools,
          format,
          outDir: deps.outDir,
          apiKeyName: "voice.tts.apiKey",
          logger: deps.logger,
        },
        { voice: options.voice, signal: options.signal },
      );
      const file = (p: string, f: SpeechFormat, voice: boolean): OutboundFile => ({
        path: p,
        fileName: `reply.${SPEECH_FORMATS[f]}`,
        mimeType: MIME_TYPES[f],
        ...(voice ? { voice: true } : {}),
      });
      if (!wantsNote || format === "opus") return file(path, format, wantsNote);
      try {
        const note = await toVoiceNote(path, {
          ...tools,
          format: "ogg-opus",
          outPath: `${path}.ogg`,
          signal: options.signal,
        });
        await rm(path, { force: true });
        return file(note, "opus", true);
      } catch (err) {
        if (!(err instanceof HeraldError && err.code === "config_missing")) throw err;
        // Without ffmpeg the reply still arrives, as an audio file instead of a voice note.
        deps.logger?.warn({ format }, "ffmpeg missing, spoken reply sent as an audio file");
        return file(path, format, false);
      }
    },
  };
}

/** `HERALD_HOME/cache/speech`, where spoken replies are written. */
export function speechDir(homeDir: string): string {
  return join(homeDir, "cache", "speech");
}
