/**
 * Voice replies on the gateway: `/voice` and the chats' voice-reply modes, read when a turn starts.
 */
import type { CommandModule } from "../../../core/commands.js";
import type { TurnRecord } from "../../../core/turn.js";
import type { KeyValueStore } from "../../../core/types.js";
import { VOICE_REPLIES_NAMESPACE, type VoiceReplyMode, VoiceReplyModes, voiceCommand } from "./reply-mode.js";

/** The fix named when `/voice on` cannot work here. */
export const TTS_NOT_CONFIGURED =
  "no speech endpoint is configured: set HERALD_TTS_URL, HERALD_TTS_MODEL and HERALD_TTS_VOICE (voice.tts in config.yaml)";

/** What voice replies need of the gateway (`GatewayRunner` has this shape). */
export interface VoiceGateway {
  state: { kv(namespace: string): KeyValueStore };
  commands: { add(module: CommandModule): unknown };
}

/** The settings voice replies read (`HeraldConfig` has this shape). */
export interface VoiceRepliesConfig {
  voice: { tts?: unknown };
}

/** What the gateway main wires from here. */
export interface VoiceReplies {
  /** The voice-reply mode of a turn's chat (none for scheduled runs). */
  voiceReplyOf(turn: TurnRecord): VoiceReplyMode | undefined;
}

/** Adds `/voice` to the gateway's commands and reads the chats' modes. */
export function createVoiceReplies(
  config: VoiceRepliesConfig,
  ports: { gateway: VoiceGateway },
): VoiceReplies {
  const modes = new VoiceReplyModes(ports.gateway.state.kv(VOICE_REPLIES_NAMESPACE));
  ports.gateway.commands.add(voiceCommand(modes, config.voice.tts ? undefined : TTS_NOT_CONFIGURED));
  return { voiceReplyOf: (turn) => (turn.cron ? undefined : modes.get(turn.chat)) };
}
