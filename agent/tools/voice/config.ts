/** The voice section of the configuration, validated with zod; every error names its key and the fix. */
import { z } from "zod";
import { ConfigError } from "../../../core/errors.js";

/** Audio formats of `/audio/speech` (`opus` is Ogg/Opus) and the file extension each is saved under. */
export const SPEECH_FORMATS = { mp3: "mp3", opus: "ogg", aac: "aac", flac: "flac", wav: "wav" } as const;

/** A `response_format` of `/audio/speech`. */
export type SpeechFormat = keyof typeof SPEECH_FORMATS;

const baseUrl = z.url({ protocol: /^https?$/ }).describe("the provider's OpenAI-compatible base URL");

const endpointSchema = z.strictObject({
  baseUrl,
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1),
  timeoutMs: z.number().int().positive().optional(),
});

/** `voice.stt`: the transcription endpoint and its limits. */
export const sttConfigSchema = endpointSchema.extend({
  language: z.string().min(2).max(8).optional(),
  maxBytes: z.number().int().positive().optional(),
  maxDurationS: z.number().positive().optional(),
  chunkDurationS: z.number().positive().optional(),
  maxTotalDurationS: z.number().positive().optional(),
});

/** `voice.tts`: the speech endpoint, its voice and output format. */
export const ttsConfigSchema = endpointSchema.extend({
  voice: z.string().min(1),
  format: z.enum(Object.keys(SPEECH_FORMATS) as [keyof typeof SPEECH_FORMATS]).optional(),
  maxInputChars: z.number().int().positive().optional(),
});

/** The `voice` section: both halves optional (a gateway may only transcribe, or only speak). */
export const voiceConfigSchema = z.strictObject({
  stt: sttConfigSchema.optional(),
  tts: ttsConfigSchema.optional(),
});

/** Validated voice configuration. */
export type VoiceConfig = z.infer<typeof voiceConfigSchema>;

/** How to fix each key, by its last path segment. */
const FIXES: Record<string, string> = {
  baseUrl:
    "set it to the provider's OpenAI-compatible base URL, e.g. https://api.openai.com/v1, " +
    "https://api.groq.com/openai/v1 or http://127.0.0.1:8000/v1 for a self-hosted server",
  apiKey: "set the provider's API key, or leave the key out for a server that needs none",
  model: "name the model, e.g. whisper-1 or whisper-large-v3-turbo for stt, gpt-4o-mini-tts or tts-1 for tts",
  voice: "name a voice of the provider, e.g. alloy",
  format: `use one of ${Object.keys(SPEECH_FORMATS).join(", ")}`,
  language: "use an ISO-639-1 code such as en or de",
};

/**
 * Validates `input` as the voice section. Throws a ConfigError whose `key` is the first bad key's path
 * under `prefix` (e.g. `voice.stt.baseUrl`) and whose message says what is wrong and how to fix it.
 */
export function parseVoiceConfig(input: unknown, prefix = "voice"): VoiceConfig {
  const parsed = voiceConfigSchema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.map(String) ?? [];
  // An unknown key is reported under its own name, not its parent's.
  if (issue?.code === "unrecognized_keys" && issue.keys[0]) path.push(issue.keys[0]);
  const key = [prefix, ...path].join(".");
  const last = path.at(-1) ?? "";
  const fix =
    issue?.code === "unrecognized_keys"
      ? `remove it; the keys here are ${knownKeys(path.slice(0, -1)).join(", ")}`
      : (FIXES[last] ?? "see the voice section of the configuration reference");
  const what =
    issue?.code === "invalid_type" && issue.input === undefined
      ? "is missing"
      : `is invalid (${issue?.message})`;
  throw new ConfigError(key, `${key} ${what}: ${fix}`, { cause: parsed.error });
}

function knownKeys(path: string[]): string[] {
  if (path[0] === "stt") return Object.keys(sttConfigSchema.shape);
  if (path[0] === "tts") return Object.keys(ttsConfigSchema.shape);
  return Object.keys(voiceConfigSchema.shape);
}
