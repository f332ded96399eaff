/**
 * `send_message` on the gateway's side (part of the composition root): resolves the target, checks
 * that only the owner sends to another chat, and queues the message in the outbox once per key (the
 * key and the outbox item commit together, so a turn run again after a crash sends nothing twice).
 */
import type Database from "better-sqlite3";
import type { ChatStateApi, MessageCaller, SendOutcome, ToolMessage } from "../agent/types.js";
import { formatChat, sameChat } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import type { ChatRef } from "../core/types.js";
import { AccessPolicy } from "../gateway/access.js";
import type { GatewayRunner } from "../gateway/runner.js";
import { HOME_CHANNELS_NAMESPACE, HomeChannels } from "../scheduler/index.js";
import { parseTargets, resolveTargets } from "../scheduler/targets.js";
import type { PairingStore } from "../sessions/types.js";
import type { HeraldConfig } from "./config.js";
import { chatParser, platformModules, userIdNormalisers } from "./platforms.js";

/** The kv namespace of sent keys: `key → outbox item id`. */
export const SENT_MESSAGES_NAMESPACE = "sent-messages";

/**
 * The owner: whoever the configuration itself names (`GATEWAY_ALLOWED_USERS`, `<P>_ALLOWED_USERS`),
 * and the API server's and the terminal's callers (they hold the key, or the machine). Users admitted
 * by a pairing code or by `GATEWAY_ALLOW_ALL_USERS` are allowed to talk, not owners.
 */
export function ownerPolicy(
  config: Pick<HeraldConfig, "access" | "platforms">,
): (caller: MessageCaller) => boolean {
  // Only `isApproved` of the pairing store is consulted: approvals by pairing never make an owner.
  const noPairing = { isApproved: () => false } as unknown as PairingStore;
  const policy = new AccessPolicy(
    { access: { ...config.access, allowAllUsers: false }, platforms: config.platforms },
    noPairing,
    userIdNormalisers,
  );
  return (caller) => policy.isAllowed(caller.chat.platform, caller.userId);
}

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
  const isOwner = ownerPolicy(config);
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
    if (!sameChat(chat, caller.chat) && !isOwner(caller))
      throw new HeraldError(
        `only the owner may send to another chat (${formatChat(chat)}); this conversation can only send to itself (target "origin")`,
        { code: "unauthorized" },
      );
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
