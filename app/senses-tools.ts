/**
 * The senses' tools of one process (part of `createAgentTools`): `text_to_speech` and spoken replies
 * when `voice.tts` is set, `vision_analyze` (it says how to configure `vision:` when unset), and
 * `send_message`. Paths the model gives are read in the session's workspace (a user's attachments are
 * copied there before the turn), never elsewhere.
 */
import { join } from "node:path";
import type { WorkspaceAccess } from "../agent/exec/index.js";
import { messagingTool } from "../agent/tools/messaging/index.js";
import { VISION_NOT_CONFIGURED, visionTool } from "../agent/tools/vision/index.js";
import { createSpokenReplies, parseVoiceConfig, speechDir } from "../agent/tools/voice/index.js";
import { speechTool } from "../agent/tools/voice/tools.js";
import type { Tool } from "../agent/types.js";
import type { SpeakReply } from "../agent/voice-reply.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { HeraldConfig } from "./config.js";
import { workspaceExporter, workspaceReader } from "./workspace-files.js";

/** What {@link sensesTools} returns. */
export interface SensesTools {
  tools: Tool[];
  /** Spoken replies for `/voice` chats, when `voice.tts` is configured. */
  speakReply: SpeakReply | undefined;
}

/** Builds the senses' tools; a bad `voice.tts` section turns speech off with the reason in `unavailable`. */
export function sensesTools(
  config: HeraldConfig,
  logger: Logger,
  unavailable: { toolset: string; missing: string; fix: string }[],
  workspaces: WorkspaceAccess,
): SensesTools {
  const exportFile = workspaceExporter(workspaces, join(config.homeDir, "cache"));
  const tools: Tool[] = [messagingTool({ exportFile })];
  const readWorkspaceFile = workspaceReader(workspaces);
  tools.push(
    visionTool({ endpoint: config.vision, readWorkspaceFile, allowPrivate: config.web.allowPrivate }),
  );
  if (!config.vision)
    unavailable.push({
      toolset: "vision",
      missing: "vision_analyze: no vision model",
      fix: VISION_NOT_CONFIGURED,
    });
  let speakReply: SpeakReply | undefined;
  if (config.voice.tts) {
    try {
      const { tts } = parseVoiceConfig({ tts: config.voice.tts }, "voice");
      if (tts) {
        const replies = createSpokenReplies(tts, {
          outDir: speechDir(config.homeDir),
          logger: logger.child({ part: "tts" }),
        });
        speakReply = (text, options) => replies.speak(text, options);
        tools.push(speechTool({ speak: (text, options) => replies.speak(text, options) }));
      }
    } catch (err) {
      unavailable.push({
        toolset: "voice",
        missing: describeError(err),
        fix: "correct voice.tts (HERALD_TTS_URL, HERALD_TTS_MODEL, HERALD_TTS_VOICE)",
      });
      logger.warn({ error: describeError(err) }, "text to speech is off");
    }
  }
  return { tools, speakReply };
}
