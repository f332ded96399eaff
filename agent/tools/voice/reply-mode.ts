/**
 * Voice replies per chat: `/voice on` (replies also arrive as a voice note), `/voice only` (only as a
 * voice note), `/voice off`. The mode is kept in a kv namespace by chat (`platform:chatId`): it holds for
 * every thread of the chat (an email conversation is a thread; a new subject must not lose the mode).
 */
import { formatChat } from "../../../core/chat.js";
import type { CommandModule } from "../../../core/commands.js";
import type { ChatRef, KeyValueStore } from "../../../core/types.js";

/** The kv namespace holding `platform:chatId → also | only`. */
export const VOICE_REPLIES_NAMESPACE = "voice-replies";

/** How a chat's replies are spoken: `also` the text and a voice note, `only` just the voice note. */
export type VoiceReplyMode = "also" | "only";

/** The chats' voice-reply modes over a kv namespace. */
export class VoiceReplyModes {
  constructor(private readonly kv: KeyValueStore) {}

  /** The chat's mode, or undefined when its replies are text only. */
  get(chat: ChatRef): VoiceReplyMode | undefined {
    const stored = this.kv.get(keyOf(chat));
    return stored === "also" || stored === "only" ? stored : undefined;
  }

  /** Sets the chat's mode; undefined turns voice replies off. */
  set(chat: ChatRef, mode: VoiceReplyMode | undefined): void {
    if (mode) this.kv.set(keyOf(chat), mode);
    else this.kv.delete(keyOf(chat));
  }
}

const keyOf = (chat: ChatRef) => formatChat({ platform: chat.platform, chatId: chat.chatId });

/**
 * `/voice on|only|off` (no argument: the current mode). `unavailable`, when set, is the reason voice
 * replies cannot be made here (no speech endpoint configured) and how to fix it: `on` and `only` then
 * answer with it and change nothing.
 */
export function voiceCommand(modes: VoiceReplyModes, unavailable?: string): CommandModule {
  return {
    commands: {
      voice: {
        description: "voice replies: /voice on (text and voice), /voice only, /voice off",
        run: ({ message, args }) => {
          const arg = args.trim().toLowerCase();
          const current = modes.get(message.chat);
          if (arg === "off") {
            modes.set(message.chat, undefined);
            return "🔇 Voice replies are off: replies arrive as text.";
          }
          if (arg === "on" || arg === "only") {
            if (unavailable) return `Voice replies are not available: ${unavailable}`;
            modes.set(message.chat, arg === "on" ? "also" : "only");
            return arg === "on"
              ? "🔊 Voice replies are on: each reply also arrives as a voice note."
              : "🔊 Voice only: replies arrive as voice notes (the text stays in the session).";
          }
          if (arg === "") {
            const now = current === "also" ? "on" : current === "only" ? "only" : "off";
            return `Voice replies are ${now}. Use /voice on, /voice only or /voice off.`;
          }
          return `"${args.trim()}" is not a voice mode: use /voice on, /voice only or /voice off.`;
        },
      },
    },
  };
}
