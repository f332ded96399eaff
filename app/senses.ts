/**
 * The gateway's part of the agent's senses (composition root): `/voice` and the chats' voice-reply
 * modes read when a turn starts, and `send_message`'s delivery (`chat.send` of the StateClient).
 */
import type Database from "better-sqlite3";
import {
  VOICE_REPLIES_NAMESPACE,
  type VoiceReplyMode,
  VoiceReplyModes,
  voiceCommand,
} from "../agent/tools/voice/index.js";
import type { ChatStateApi } from "../agent/types.js";
import type { TurnRecord } from "../core/turn.js";
import type { GatewayRunner } from "../gateway/runner.js";
import type { HeraldConfig } from "./config.js";
import { createMessageSender } from "./messaging.js";

/** What the gateway main wires from here. */
export interface GatewaySenses {
  /** The voice-reply mode of a turn's chat (none for scheduled runs). */
  voiceReplyOf(turn: TurnRecord): VoiceReplyMode | undefined;
  /** `chat.send` of the in-process StateClient (and so of the state API). */
  send: ChatStateApi["send"];
}

/** The fix named when `/voice on` cannot work here. */
export const TTS_NOT_CONFIGURED =
  "no speech endpoint is configured: set HERALD_TTS_URL, HERALD_TTS_MODEL and HERALD_TTS_VOICE (voice.tts in config.yaml)";

/** Adds `/voice` to the runner's commands and builds the senses' gateway side. */
export function attachSenses(
  config: HeraldConfig,
  runner: GatewayRunner,
  database: Database.Database,
): GatewaySenses {
  const modes = new VoiceReplyModes(runner.state.kv(VOICE_REPLIES_NAMESPACE));
  runner.commands.add(voiceCommand(modes, config.voice.tts ? undefined : TTS_NOT_CONFIGURED));
  return {
    voiceReplyOf: (turn) => (turn.cron ? undefined : modes.get(turn.chat)),
    send: createMessageSender(config, runner, database),
  };
}
