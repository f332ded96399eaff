/**
 * The voice abilities of one process: transcription of voice notes before a turn (`voice.stt`), and
 * `text_to_speech` with spoken replies for `/voice` chats (`voice.tts`). A section that does not parse
 * turns its half off, with the reason among the process's unavailable toolsets.
 */
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { InboundAttachment } from "../../../core/types.js";
import type { UnavailableToolset } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import type { SpeakReply } from "../../voice-reply.js";
import { parseVoiceConfig } from "./config.js";
import { createVoice } from "./create.js";
import { createSpokenReplies, speechDir } from "./reply.js";
import { textToSpeechTool } from "./text-to-speech.js";

/** The settings voice reads (`HeraldConfig` has this shape). */
export interface VoiceSettings {
  homeDir: string;
  voice: { stt?: Record<string, unknown> | undefined; tts?: Record<string, unknown> | undefined };
}

/** What voice is built with: the process's logger and its list of unavailable toolsets. */
export interface VoicePorts {
  logger: Logger;
  unavailable: UnavailableToolset[];
}

/** Transcription of voice notes before the turn, when `voice.stt` is set; a bad section is reported. */
export function createTranscriber(
  config: VoiceSettings,
  ports: VoicePorts,
): ((attachment: InboundAttachment, signal?: AbortSignal) => Promise<string>) | undefined {
  if (!config.voice.stt) return undefined;
  try {
    const voice = createVoice({ stt: config.voice.stt }, { logger: ports.logger, keyPrefix: "voice" });
    const transcribe = voice.transcribe;
    if (!transcribe) return undefined;
    return async (attachment, signal) => (await transcribe(attachment.path, { signal })).text;
  } catch (err) {
    ports.unavailable.push({
      toolset: "voice",
      missing: describeError(err),
      fix: "correct voice.stt (HERALD_STT_URL, HERALD_STT_MODEL)",
    });
    ports.logger.warn({ error: describeError(err) }, "voice notes will not be transcribed");
    return undefined;
  }
}

/** `text_to_speech` and the spoken replies of `/voice` chats. */
export interface SpeechTools {
  tools: Tool[];
  /** Spoken replies for `/voice` chats; undefined without `voice.tts`. */
  speakReply: SpeakReply | undefined;
}

/** Speech when `voice.tts` is set (none otherwise); a bad section turns it off with the reason. */
export function createSpeechTools(config: VoiceSettings, ports: VoicePorts): SpeechTools {
  if (!config.voice.tts) return { tools: [], speakReply: undefined };
  try {
    const { tts } = parseVoiceConfig({ tts: config.voice.tts }, "voice");
    if (!tts) return { tools: [], speakReply: undefined };
    const replies = createSpokenReplies(tts, {
      outDir: speechDir(config.homeDir),
      logger: ports.logger.child({ part: "tts" }),
    });
    return {
      tools: [textToSpeechTool({ speak: (text, options) => replies.speak(text, options) })],
      speakReply: (text, options) => replies.speak(text, options),
    };
  } catch (err) {
    ports.unavailable.push({
      toolset: "voice",
      missing: describeError(err),
      fix: "correct voice.tts (HERALD_TTS_URL, HERALD_TTS_MODEL, HERALD_TTS_VOICE)",
    });
    ports.logger.warn({ error: describeError(err) }, "text to speech is off");
    return { tools: [], speakReply: undefined };
  }
}
