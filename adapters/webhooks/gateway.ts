/**
 * Inbound webhooks on the gateway: each verified delivery becomes a turn whose answer goes to the
 * route's targets through the outbox, like a cron run's. The turn id is derived from the route and the
 * delivery's signed timestamp and body, and the turn journal is the replay record: the same body resent
 * (under any delivery id, or none) finds its turn and is refused. A delivery id is recorded in the
 * inbound ledger besides, so a sender's retry signed anew under the same id is refused too. Both records
 * are kept as long as the state keeps turns (14 days).
 */
import { createHash } from "node:crypto";
import { formatChat } from "../../core/chat.js";
import type { Logger } from "../../core/logger.js";
import type { GatewayEvents, TurnControl, TurnRecord, TurnResult } from "../../core/turn.js";
import type { ChatRef, InboundMessage, KeyValueStore } from "../../core/types.js";
import {
  HOME_CHANNELS_NAMESPACE,
  HomeChannels,
  parseTargets,
  resolveTargets,
} from "../../scheduler/index.js";
import type { InboundLedger, SessionStore, TurnJournal } from "../../sessions/index.js";
import { createInboundWebhookRoute } from "./route.js";
import type { ResolvedWebhook, WebhookNodeRoute, WebhookSubmit } from "./types.js";

/** What inbound webhooks need of the gateway (`GatewayRunner` has this shape). */
export interface WebhooksGateway
  extends GatewayEvents<{ type: "turn-finished"; turn: TurnRecord; result: TurnResult }> {
  state: {
    kv(namespace: string): KeyValueStore;
    transaction<T>(fn: () => T): T;
    turns: Pick<TurnJournal, "get">;
    sessions: Pick<SessionStore, "open">;
    ledger: Pick<InboundLedger, "record" | "markHandled">;
  };
  control: Pick<TurnControl, "submit" | "notify" | "isRunning">;
}

/** The settings inbound webhooks read (`HeraldConfig` has this shape). */
export interface WebhooksConfig {
  webhooks: readonly ResolvedWebhook[];
  platforms: Readonly<Record<string, { homeChannel?: string | undefined } | undefined>>;
}

/** What inbound webhooks are built on. */
export interface WebhooksPorts {
  gateway: WebhooksGateway;
  /** Every platform this build knows (a route's `deliver` may name one). */
  platforms: readonly string[];
  /** Parses a chat string with every platform's chat-id rules. */
  parseChat: (value: string) => ChatRef | undefined;
  logger: Logger;
}

/** The turn id of one delivery of a route (colon-free, stable across restarts). */
export function webhookTurnId(name: string, deliveryId: string): string {
  return `w${createHash("sha256").update(`${name}\u0000${deliveryId}`).digest("hex").slice(0, 24)}`;
}

/**
 * The `/webhooks/in/<name>` route, or undefined without `webhooks:`. Call before `runner.start()`.
 * Each route's `deliver` was checked when the config was loaded.
 */
export function createWebhooks(config: WebhooksConfig, ports: WebhooksPorts): WebhookNodeRoute | undefined {
  if (config.webhooks.length === 0) return undefined;
  const { gateway: runner, parseChat: chatParser, logger } = ports;
  const known = new Set([...ports.platforms, "api"]);
  const targetsOf = new Map<string, string[]>();
  for (const route of config.webhooks) {
    targetsOf.set(
      route.name,
      parseTargets(route.deliver, { hasOrigin: false, knownPlatforms: known, parseChat: chatParser }),
    );
  }
  const homes = new HomeChannels(
    runner.state.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
    chatParser,
  );
  const log = logger.child({ component: "webhooks" });
  const names = new Set(config.webhooks.map((r) => r.name));

  // A failed webhook turn says so in its targets (a cron run's failure goes to the cron service instead).
  runner.on("turn-finished", ({ turn, result }) => {
    if (turn.source !== "webhook" || result.kind === "ok" || !turn.cron) return;
    try {
      for (const { chat } of turn.cron.targets)
        runner.control.notify(chat, `⚠️ The webhook "${turn.chat.chatId}" turn failed: ${result.userMessage}`);
    } catch (err) {
      log.error({ turnId: turn.id, error: String(err) }, "reporting a failed webhook turn failed");
    }
  });

  const submit: WebhookSubmit = (route, delivery, prompt) => {
    const turnId = webhookTurnId(route.name, delivery.bodyKey);
    if (runner.state.turns.get(turnId)) return { kind: "duplicate", by: "body" };
    const targets = resolveTargets(targetsOf.get(route.name) ?? [], undefined, {
      homeChannel: (platform) => homes.get(platform),
      isRunning: (platform) => runner.control.isRunning(platform),
      parseChat: chatParser,
    });
    if (targets.chats.length === 0) {
      return {
        kind: "undeliverable",
        reason: targets.unreachable.map((t) => `${t.spec}: ${t.reason}`).join("; ") || "no target",
      };
    }
    // Recorded before the turn: a replay must never run twice, even if submitting fails below.
    if (delivery.id !== undefined && !recordDeliveryId(runner, route.name, delivery.id))
      return { kind: "duplicate", by: "id" };
    for (const t of targets.unreachable)
      log.warn({ webhook: route.name, target: t.spec, reason: t.reason }, "webhook target unreachable");
    const parts = {
      chat: { platform: "webhook", chatId: route.name, threadId: turnId },
      chatType: "dm" as const,
      userId: `webhook:${route.name}`,
    };
    const opened = runner.state.sessions.open(parts, { mode: "none", idleMinutes: 1440, atHour: 4 });
    runner.control.submit({
      id: turnId,
      sessionId: opened.session.id,
      sessionKey: opened.session.key,
      chat: parts.chat,
      userId: parts.userId,
      source: "webhook",
      input: prompt,
      cron: {
        jobId: `webhook:${route.name}`,
        runId: turnId,
        targets: targets.chats,
        subject: `Webhook ${route.name}`,
      },
      options: { toolsets: route.toolsets },
    });
    log.info(
      { webhook: route.name, turnId, targets: targets.chats.map((t) => formatChat(t.chat)) },
      "webhook turn submitted",
    );
    return { kind: "accepted", turnId };
  };
  log.info({ routes: [...names] }, "inbound webhooks ready");
  return createInboundWebhookRoute({ routes: [...config.webhooks], submit, logger });
}

/**
 * Records delivery id `id` of route `name` in the inbound ledger (handled at once, so it is never
 * replayed at start, and pruned with the ledger); false when it was recorded before.
 */
function recordDeliveryId(runner: WebhooksGateway, name: string, id: string): boolean {
  const { state } = runner;
  const message: InboundMessage = {
    platform: "webhook",
    messageId: `${name}:${id}`,
    chat: { platform: "webhook", chatId: name },
    chatType: "dm",
    sender: { id: `webhook:${name}` },
    text: "",
    mentioned: false,
  };
  return state.transaction(() => {
    if (!state.ledger.record(message)) return false;
    state.ledger.markHandled(message.platform, message.messageId, "webhook delivery");
    return true;
  });
}
