/**
 * `text_to_speech` (toolset "voice"): the agent speaks a text. The audio is sent to the chat with the
 * reply: a voice note on Telegram and WhatsApp (Ogg/Opus), an audio file elsewhere (MP3). Present only
 * when a speech endpoint is configured (`voice.tts`).
 */
import { basename } from "node:path";
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import type { SpeakReply } from "../../voice-reply.js";

/** The provider's input limit is handled by splitting; this bounds one call's cost. */
const MAX_TEXT_CHARS = 20_000;

/** What `text_to_speech` runs with. */
export interface TextToSpeechToolDeps {
  /** Synthesizes text for a platform (voice name optional); see `agent/tools/voice/reply.ts`. */
  speak: (
    text: string,
    options: Parameters<SpeakReply>[1] & { voice?: string | undefined },
  ) => ReturnType<SpeakReply>;
}

/** `text_to_speech`, bound to `deps`. */
export function textToSpeechTool(deps: TextToSpeechToolDeps): Tool {
  return defineTool({
    name: "text_to_speech",
    description:
      "Speak a text aloud: the audio is sent to the user with your reply (a voice note where the chat has them, otherwise an audio file). Use it when the user asks to hear something; for every reply as voice, the user can send /voice on.",
    parameters: z.object({
      text: z.string().min(1).max(MAX_TEXT_CHARS).describe("What to say, as plain sentences."),
      voice: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .describe("A voice name of the provider (default: configured)."),
    }),
    toolset: "voice",
    label: (args) => `🔊 ${args.text.slice(0, 60)}${args.text.length > 60 ? "…" : ""}`,
    async execute(args, ctx) {
      const file = await deps.speak(args.text, {
        platform: ctx.origin.chat.platform,
        voice: args.voice,
        signal: ctx.signal,
      });
      const kind = file.voice ? "a voice note" : `an audio file (${basename(file.fileName ?? file.path)})`;
      return {
        content: `Spoken: ${args.text.length} characters as ${kind}, saved at ${file.path}. It is sent with your reply; don't repeat the text unless asked.`,
        files: [
          {
            path: file.path,
            ...(file.fileName ? { fileName: file.fileName } : {}),
            ...(file.mimeType ? { mimeType: file.mimeType } : {}),
            ...(file.voice ? { voice: true } : {}),
          },
        ],
      };
    },
  });
}
