/**
 * `send_message` on the gateway's side: resolves the target, asks the owner policy (only an owner sends
 * to another chat), and queues the message in the outbox once per key (the key and the outbox item
 * commit together, so a turn run again after a crash sends nothing twice).
 */
import type Database from "better-sqlite3";
import type { DeliveryRule } from "../../../core/access.js";
import { formatChat } from "../../../core/chat.js";
import { HeraldError } from "../../../core/errors.js";
import type { TurnControl } from "../../../core/turn.js";
import type { ChatRef, KeyValueStore } from "../../../core/types.js";
import {
  HOME_CHANNELS_NAMESPACE,
  HomeChannels,
  parseTargets,
  resolveTargets,
} from "../../../scheduler/index.js";
import type { Outbox, OutboxItem } from "../../../sessions/index.js";
import type { ChatStateApi, MessageCaller, SendOutcome, ToolMessage } from "../../types.js";

/** The kv namespace of sent keys: `key → outbox item id`. */
export const SENT_MESSAGES_NAMESPACE = "sent-messages";

/** What `send_message` needs of the gateway (`GatewayRunner` has this shape). */
export interface MessagingGateway {
  state: {
    kv(namespace: string): KeyValueStore;
    transaction<T>(fn: () => T): T;
    afterCommit(effect: () => void): void;
    committed(): Promise<void>;
    outbox: Pick<Outbox, "add">;
  };
  access: DeliveryRule;
  control: Pick<TurnControl, "isRunning">;
  outbox: { deliver(item: OutboxItem): void };
  /** The running adapters, by platform. */
  adapters: ReadonlyMap<string, unknown>;
}

/** What `send_message` reads besides the gateway. */
export interface MessagingPorts {
  gateway: MessagingGateway;
  /** The state file's connection (keys of pruned outbox items are dropped at start). */
  database: Database.Database;
  /** Every platform this build knows (a target may name one that is not running). */
  platforms: readonly string[];
  /** Parses a chat string with every platform's chat-id rules. */
  parseChat: (value: string) => ChatRef | undefined;
}

/** The settings `send_message` reads (`HeraldConfig` has this shape). */
export interface MessagingConfig {
  platforms: Readonly<Record<string, { homeChannel?: string | undefined } | undefined>>;
}

/** Builds `chat.send` over the gateway: see {@link ChatStateApi.send}. */
export function createMessageSender(config: MessagingConfig, ports: MessagingPorts): ChatStateApi["send"] {
  const { gateway: runner, parseChat } = ports;
  const { state } = runner;
  const sent = state.kv(SENT_MESSAGES_NAMESPACE);
  // Keys whose outbox item was pruned (14 days) can never be asked for again: dropped at start.
  ports.database
    .prepare("DELETE FROM kv WHERE namespace = ? AND value NOT IN (SELECT id FROM outbox)")
    .run(SENT_MESSAGES_NAMESPACE);
  const homes = new HomeChannels(
    state.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
    parseChat,
  );
  const resolve = (target: string, origin: ChatRef): ChatRef => {
    const known = new Set([...ports.platforms, ...runner.adapters.keys()]);
    const [spec] = parseTargets(target, { hasOrigin: true, knownPlatforms: known, parseChat });
    if (!spec || spec === "local")
      throw new HeraldError(`"${target}" is not a chat to send to: name one chat`, { code: "invalid_input" });
    const resolved = resolveTargets([spec], origin, {
      homeChannel: (platform) => homes.get(platform),
      isRunning: (platform) => runner.control.isRunning(platform),
      parseChat,
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
