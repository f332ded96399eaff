/**
 * Voice: speech to text for incoming voice notes, text to speech for voice replies, and the ffmpeg
 * conversions between the formats platforms want (build them with `createVoice`), `text_to_speech`, and
 * `/voice` with the chats' voice-reply modes.
 */
export { parseVoiceConfig, type VoiceConfig, voiceConfigSchema } from "./config.js";
export {
  type ConvertOptions,
  type FfmpegStatus,
  ffmpegAvailable,
  probeAudio,
  toVoiceNote,
} from "./convert.js";
export { createVoice, type Voice, type VoiceDeps } from "./create.js";
export { createVoiceReplies, TTS_NOT_CONFIGURED, type VoiceGateway, type VoiceReplies } from "./gateway.js";
export { parseRetryAfterMs } from "./http.js";
export {
  createSpokenReplies,
  type SpokenReplies,
  type SpokenRepliesDeps,
  type SpokenReplyOptions,
  speechDir,
  VOICE_NOTE_PLATFORMS,
} from "./reply.js";
export { VOICE_REPLIES_NAMESPACE, type VoiceReplyMode, VoiceReplyModes, voiceCommand } from "./reply-mode.js";
export { splitForSpeech } from "./sentences.js";
export { createSpeechTools, createTranscriber, type SpeechTools } from "./setup.js";
export { SPEECH_FORMATS, type SpeakOptions, type SpeechFormat, speak } from "./speak.js";
export { type TextToSpeechToolDeps, textToSpeechTool } from "./text-to-speech.js";
export { type TranscribeOptions, transcribe } from "./transcribe.js";
export type * from "./types.js";
