/**
 * Providers, models and usage on the gateway: `/model`, `/reasoning`, `/usage`, the session's model
 * settings for each turn's job, `herald_tokens_total`, and the owner's notice when a provider refuses
 * its key (once until that provider answers again).
 */
import type { CommandModule } from "../../core/commands.js";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { MetricsRegistry } from "../../core/metrics.js";
import type { GatewayEvents, ProviderAlert, TurnControl, TurnRecord, TurnResult } from "../../core/turn.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { HOME_CHANNELS_NAMESPACE, HomeChannels } from "../../scheduler/index.js";
import type { SessionStore, UsageLedger } from "../../sessions/index.js";
import type { ProviderCatalog } from "./catalog.js";
import { providerCommands } from "./commands.js";
import { SESSION_MODELS_NAMESPACE, SessionModelStore } from "./settings.js";
import type { ReasoningEffort } from "./types.js";

/** What providers need of the gateway's runner (`GatewayRunner` has this shape). */
export interface ProvidersGateway
  extends GatewayEvents<{ type: "turn-finished"; turn: TurnRecord; result: TurnResult }> {
  commands: { add(module: CommandModule): unknown };
  access: { isOwner(platform: string, userId: string): boolean };
  control: Pick<TurnControl, "notify">;
  /** The running adapters, by platform (their home channels hear of a refused key). */
  adapters: ReadonlyMap<string, unknown>;
}

/** The settings providers read (`HeraldConfig` has this shape). */
export interface ProvidersConfig {
  model: { fallbacks: readonly string[] };
  platforms: Readonly<Record<string, { homeChannel?: string | undefined } | undefined>>;
}

/** What providers are built on. */
export interface ProvidersPorts {
  gateway: ProvidersGateway;
  state: { kv(namespace: string): KeyValueStore; sessions: Pick<SessionStore, "list">; usage: UsageLedger };
  /** The catalog of the configured providers (`createCatalog`). */
  catalog: ProviderCatalog;
  /** Where `herald_tokens_total` is registered. */
  metrics: MetricsRegistry;
  logger: Logger;
  /** A line `/usage` adds for a session key (the cloud sandbox's hours and cost). */
  extraUsage?: ((sessionKey: string) => string | undefined) | undefined;
}

/** What the gateway's turn context adds from the session's settings. */
export interface SessionModels {
  /** The session's model and reasoning effort for a turn starting now (binds early settings to it). */
  forTurn(turn: TurnRecord): { model?: string | undefined; reasoningEffort?: ReasoningEffort | undefined };
  /** The model the next turn of a session key runs on (`/status`): its `/model` choice, else `fallback` (its agent's), else the default. */
  modelOf(sessionKey: string, fallback?: string): string;
}

/**
 * Registers the commands, the usage metric and the key-failure notices on the runner. Call before
 * `runner.start()`.
 */
export function createProviders(config: ProvidersConfig, ports: ProvidersPorts): SessionModels {
  const { gateway: runner, state, catalog, metrics, logger } = ports;
  const settings = new SessionModelStore(state.kv(SESSION_MODELS_NAMESPACE));
  runner.commands.add(
    providerCommands({
      catalog,
      settings,
      sessions: state.sessions,
      usage: state.usage,
      fallbacks: config.model.fallbacks,
      extraUsage: ports.extraUsage,
    }),
  );

  const tokens = metrics.counter(
    "herald_tokens_total",
    "Model tokens by kind (prompt, completion, cached: the part of prompt served from the provider's cache, cache_write: the part written to it, reasoning: the part of completion spent reasoning) and model.",
  );
  const alerted = state.kv("provider-alerts");
  // Alerts this process cleared and has not set since: a turn's end clears nothing then (each clear,
  // after the commit, would be a transaction of its own on every turn). Only this listener writes them.
  const cleared = new Set<string>();
  const log = logger.child({ component: "providers" });
  const notifyOwner = ownerNotices(config, {
    gateway: runner,
    kv: (namespace) => state.kv(namespace),
    alerted,
    cleared,
    log,
  });

  runner.on("turn-finished", ({ turn, result }) => {
    try {
      for (const line of result.usage?.byModel ?? []) {
        tokens.inc({ kind: "prompt", model: line.model }, line.promptTokens);
        tokens.inc({ kind: "completion", model: line.model }, line.completionTokens);
        tokens.inc({ kind: "cached", model: line.model }, line.cachedTokens);
        if (line.cacheWriteTokens)
          tokens.inc({ kind: "cache_write", model: line.model }, line.cacheWriteTokens);
        if (line.reasoningTokens) tokens.inc({ kind: "reasoning", model: line.model }, line.reasoningTokens);
      }
      // A provider that answered again may alert again the next time its key fails.
      for (const line of result.usage?.byModel ?? []) {
        const provider = catalog.resolve(line.model)?.provider.name;
        if (!provider) continue;
        for (const status of [401, 403]) {
          const key = `${provider}:${status}`;
          if (cleared.has(key)) continue;
          alerted.delete(key);
          cleared.add(key);
        }
      }
      for (const alert of result.alerts ?? []) notifyOwner(turn, alert);
    } catch (err) {
      log.error({ error: describeError(err) }, "usage listener failed");
    }
  });

  return {
    modelOf(sessionKey, fallback) {
      const active = state.sessions
        .list({ keyPrefix: sessionKey, activeOnly: true, limit: 5 })
        .find((s) => s.key === sessionKey);
      return settings.get(sessionKey, active?.id).model ?? fallback ?? catalog.defaultModel;
    },
    forTurn(turn) {
      const s = settings.get(turn.sessionKey, turn.sessionId, true);
      return {
        model: s.model,
        reasoningEffort: s.reasoning && s.reasoning !== "off" ? s.reasoning : undefined,
      };
    },
  };
}

/**
 * Tells the owner once that a provider refused its key: in the turn's chat when an owner sent it, and
 * in every running platform's home channel. `alerted` keeps what was told until the provider answers.
 */
function ownerNotices(
  config: ProvidersConfig,
  parts: {
    gateway: ProvidersGateway;
    kv: (namespace: string) => KeyValueStore;
    alerted: KeyValueStore;
    /** Keys of `alerted` known absent: one set here leaves it. */
    cleared: Set<string>;
    log: Logger;
  },
): (turn: TurnRecord, alert: ProviderAlert) => void {
  const { gateway: runner, alerted, log } = parts;
  const homes = new HomeChannels(
    parts.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
  );
  return (turn, alert) => {
    const key = `${alert.provider}:${alert.status}`;
    if (alerted.get(key)) return;
    alerted.set(key, String(Date.now()));
    parts.cleared.delete(key);
    log.error(
      { provider: alert.provider, model: alert.model, status: alert.status },
      "provider refused its key",
    );
    const text = `⚠️ Provider '${alert.provider}' answered ${alert.status} for ${alert.model}; I used the next model in the fallback chain. ${alert.message} (You will hear this once, until that provider answers again.)`;
    const chats = new Map<string, ChatRef>();
    const own =
      turn.inbound &&
      turn.chat.platform !== "api" &&
      runner.access.isOwner(turn.inbound.platform, turn.inbound.sender.id);
    if (own) chats.set(`${turn.chat.platform}:${turn.chat.chatId}`, turn.chat);
    for (const platform of runner.adapters.keys()) {
      const home = homes.get(platform);
      if (home) chats.set(`${home.platform}:${home.chatId}:${home.threadId ?? ""}`, home);
    }
    if (chats.size === 0)
      log.warn({ provider: alert.provider }, "no owner chat to tell (set a home channel with /sethome)");
    for (const chat of chats.values()) runner.control.notify(chat, text);
  };
}
