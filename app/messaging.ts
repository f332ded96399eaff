/**
 * `send_message` on the gateway's side (part of the composition root): resolves the target, asks the
 * owner policy (`runner.access.checkDelivery`: only an owner sends to another chat), and queues the
 * message in the outbox once per key (the key and the outbox item commit together, so a turn run again
 * after a crash sends nothing twice).
 */
import type Database from "better-sqlite3";
import type { ChatStateApi, MessageCaller, SendOutcome, ToolMessage } from "../agent/types.js";
import { formatChat } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import type { ChatRef } from "../core/types.js";
import type { GatewayRunner } from "../gateway/runner.js";
import { HOME_CHANNELS_NAMESPACE, HomeChannels } from "../scheduler/index.js";
import { parseTargets, resolveTargets } from "../scheduler/targets.js";
import type { HeraldConfig } from "./config.js";
import { chatParser, platformModules } from "./platforms.js";

/** The kv namespace of sent keys: `key → outbox item id`. */
export const SENT_MESSAGES_NAMESPACE = "sent-messages";

/** Builds `chat.send` over the runner: see {@link ChatStateApi.send}. */
export function createMessageSender(
  config: HeraldConfig,
  runner: GatewayRunner,
  database: Database.Database,
): ChatStateApi["send"] {
  const { state } = runner;
  const sent = state.kv(SENT_MESSAGES_NAMESPACE);
  // Keys whose outbox item was pruned (14 days) can never be asked for again: dropped at start.
  database
    .prepare("DELETE FROM kv WHERE namespace = ? AND value NOT IN (SELECT id FROM outbox)")
    .run(SENT_MESSAGES_NAMESPACE);
  const homes = new HomeChannels(
    state.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
    chatParser,
  );
  const resolve = (target: string, origin: ChatRef): ChatRef => {
    const known = new Set([...platformModules.map((m) => m.name), ...runner.adapters.keys()]);
    const [spec] = parseTargets(target, { hasOrigin: true, knownPlatforms: known, parseChat: chatParser });
    if (!spec || spec === "local")
      throw new HeraldError(`"${target}" is not a chat to send to: name one chat`, { code: "invalid_input" });
    const resolved = resolveTargets([spec], origin, {
      homeChannel: (platform) => homes.get(platform),
      isRunning: (platform) => runner.control.isRunning(platform),
      parseChat: chatParser,
    });
    const chat = resolved.chats[0]?.chat;
    if (!chat)
      throw new HeraldError(`cannot send to ${target}: ${resolved.unreachable[0]?.reason ?? "unknown"}`, {
        code: "invalid_input",
      });
    return chat;
  };
  return async (caller: MessageCaller, target: string, message: ToolMessage, key: string) => {
    const chat = resolve(target, caller.chat);
    runner.access.checkDelivery(caller, target, chat);
    const outcome: SendOutcome = { to: formatChat(chat), duplicate: false };
    state.transaction(() => {
      if (sent.get(key)) {
        outcome.duplicate = true;
        return;
      }
      const files = message.files?.length ? { files: message.files } : {};
      const item = state.outbox.add(chat, { text: message.text, ...files });
      sent.set(key, item.id);
      state.afterCommit(() => runner.outbox.deliver(item));
    });
    await state.committed();
    return outcome;
  };
}
