/**
 * Providers, models and usage wired for the gateway and workers (part of the composition root): the
 * catalog from config, the model client on it, `/model`, `/reasoning`, `/usage`, the session's model
 * settings for each turn's job, `herald_tokens_total`, and the owner's notice when a provider refuses
 * its key (once until that provider answers again).
 */
import { createModelClient, legacyProvider, type ModelClient } from "../agent/model-client.js";
import { ProviderCatalog } from "../agent/providers/catalog.js";
import { providerCommands } from "../agent/providers/commands.js";
import { SESSION_MODELS_NAMESPACE, SessionModelStore } from "../agent/providers/settings.js";
import type { ReasoningEffort } from "../agent/providers/types.js";
import { ConfigError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { MetricsRegistry } from "../core/metrics.js";
import type { ProviderAlert, TurnRecord, TurnResult } from "../core/turn.js";
import type { ChatRef } from "../core/types.js";
import type { GatewayRunner } from "../gateway/runner.js";
import { HOME_CHANNELS_NAMESPACE, HomeChannels } from "../scheduler/index.js";
import type { SqliteState } from "../sessions/sqlite-state.js";
import type { HeraldConfig, ProviderConfig } from "./config.js";

/** The catalog of the configured providers plus the legacy endpoint. @throws ConfigError for a model reference naming no provider. */
export function createCatalog(config: HeraldConfig): ProviderCatalog {
  const catalog = new ProviderCatalog({
    providers: config.providers as ProviderConfig[],
    legacy: legacyProvider(config.model),
    defaultModel: config.model.default ?? config.model.name,
    contextTokens: config.model.contextTokens,
    vision: config.model.vision,
  });
  if (config.providers.length) {
    const names = new Set(config.providers.map((p) => p.name));
    const refs: [string, string | undefined][] = [
      ["model.default", config.model.default],
      ...config.model.fallbacks.map((f, i): [string, string] => [`model.fallbacks.${i}`, f]),
      ["auxiliary.compression", config.auxiliary.compression],
      ["auxiliary.review", config.auxiliary.review],
    ];
    for (const [key, ref] of refs) {
      if (!ref) continue;
      const slash = ref.indexOf("/");
      const declared = config.providers.some((p) => p.models.some((m) => m.name === ref));
      if (!declared && slash > 0 && !names.has(ref.slice(0, slash)) && !names.has("default")) {
        throw new ConfigError(
          key,
          `config.yaml: ${key} is '${ref}', but no provider is named '${ref.slice(0, slash)}' (providers: ${[...names].join(", ")}). Fix: write it as <provider>/<model> with one of those names.`,
        );
      }
    }
  }
  return catalog;
}

/** The model client of this process on the configured providers. */
export function createConfiguredModelClient(
  config: HeraldConfig,
  options: { retryBaseDelayMs?: number | undefined } = {},
): ModelClient {
  return createModelClient({
    ...config.model,
    name: config.model.default ?? config.model.name,
    catalog: createCatalog(config),
    retryBaseDelayMs: options.retryBaseDelayMs,
  });
}

/** What the gateway's turn context adds from the session's settings. */
export interface SessionModels {
  /** The session's model and reasoning effort for a turn starting now (binds early settings to it). */
  forTurn(turn: TurnRecord): { model?: string | undefined; reasoningEffort?: ReasoningEffort | undefined };
  /** The model the next turn of a session key runs on (`/status`). */
  modelOf(sessionKey: string): string;
}

/**
 * Registers the commands, the usage metric and the key-failure notices on the runner. Call before
 * `runner.start()`.
 */
export function attachProviders(
  config: HeraldConfig,
  runner: GatewayRunner,
  state: SqliteState,
  metrics: MetricsRegistry,
  logger: Logger,
): SessionModels {
  const catalog = createCatalog(config);
  const settings = new SessionModelStore(state.kv(SESSION_MODELS_NAMESPACE));
  runner.commands.add(
    providerCommands({
      catalog,
      settings,
      sessions: state.sessions,
      usage: state.usage,
      fallbacks: config.model.fallbacks,
    }),
  );

  const tokens = metrics.counter(
    "herald_tokens_total",
    "Model tokens by kind (prompt, completion, cached: the part of prompt served from the provider's cache) and model.",
  );
  const homes = new HomeChannels(
    state.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
  );
  const alerted = state.kv("provider-alerts");
  const log = logger.child({ component: "providers" });

  const notifyOwner = (turn: TurnRecord, alert: ProviderAlert) => {
    const key = `${alert.provider}:${alert.status}`;
    if (alerted.get(key)) return;
    alerted.set(key, String(Date.now()));
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

  runner.turnFinished.add((turn: TurnRecord, result: TurnResult) => {
    try {
      for (const line of result.usage?.byModel ?? []) {
        tokens.inc({ kind: "prompt", model: line.model }, line.promptTokens);
        tokens.inc({ kind: "completion", model: line.model }, line.completionTokens);
        tokens.inc({ kind: "cached", model: line.model }, line.cachedTokens);
      }
      // A provider that answered again may alert again the next time its key fails.
      for (const line of result.usage?.byModel ?? []) {
        const provider = catalog.resolve(line.model)?.provider.name;
        if (provider) for (const status of [401, 403]) alerted.delete(`${provider}:${status}`);
      }
      for (const alert of result.alerts ?? []) notifyOwner(turn, alert);
    } catch (err) {
      log.error({ error: describeError(err) }, "usage listener failed");
    }
  });

  return {
    modelOf(sessionKey) {
      const active = state.sessions
        .list({ keyPrefix: sessionKey, activeOnly: true, limit: 5 })
        .find((s) => s.key === sessionKey);
      return settings.get(sessionKey, active?.id).model ?? catalog.defaultModel;
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
