/**
 * The gateway's adapters (part of `herald gateway`'s composition root): the API server, the adapters a
 * caller brings (`herald chat`'s terminal, tests), and every configured platform from its module, each
 * with its dependencies. A platform that cannot be created or started is recorded with the reason and
 * logged; the others run on.
 */
import { join } from "node:path";
import type { ApiAdapter } from "../adapters/api/index.js";
import type { ChatPort } from "../adapters/shared/index.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { AdapterDeps, InboundHandler, PlatformAdapter } from "../core/types.js";
import { type GatewayRunner, turnIdFor } from "../gateway/index.js";
import type { SqliteState } from "../sessions/index.js";
import { configuredAccounts, configuredPlatforms, envTable, type HeraldConfig, sectionOf } from "./config.js";
import { accountVariables } from "./config-accounts.js";
import { accountAdapter } from "./platform-accounts.js";
import { createWebChatServices } from "./web-chat.js";

/** The adapters to start, and the platforms that could not even be created. */
export interface GatewayAdapters {
  api: ApiAdapter | undefined;
  adapters: PlatformAdapter[];
  /** Platforms that failed, with the reason (filled further by `startAdapters`). */
  failed: Map<string, string>;
}

/**
 * Builds the API server (when enabled), the extra adapters and the configured platforms (not with
 * `localOnly`), and adds each to the runner.
 */
export async function createAdapters(
  config: HeraldConfig,
  parts: {
    state: SqliteState;
    runner: GatewayRunner;
    logger: Logger;
    extraAdapters?: PlatformAdapter[] | undefined;
    localOnly?: boolean | undefined;
    /** What chat clients read beside the messages, served under `/v1/herald/*`. */
    chat: ChatPort;
    /** Settles once the plugins' and MCP servers' commands are in the runner's command menu. */
    menuReady?: Promise<unknown> | undefined;
  },
): Promise<GatewayAdapters> {
  const { state, runner, logger, menuReady } = parts;
  // The API server's module loads only where it is enabled.
  const api = config.apiServer.enabled ? await apiAdapter(config, state, logger, parts.chat) : undefined;
  const adapters: PlatformAdapter[] = [...(api ? [api] : []), ...(parts.extraAdapters ?? [])];
  const failed = new Map<string, string>();
  const { url, token } = config.ha;
  const services = {
    webchat: createWebChatServices(config, { state, runner, chat: parts.chat }),
    // The Home Assistant the `ha` toolset reaches, for the platform's notifications.
    homeAssistantApi: url && token ? { url: url.replace(/\/+$/, ""), token } : undefined,
  };
  if (!parts.localOnly) {
    const platforms = [
      ...configuredPlatforms(config).map((module) => ({
        name: module.name,
        module,
        section: sectionOf(config, module),
      })),
      ...configuredAccounts(config),
    ];
    for (const { name, module, section } of platforms) {
      try {
        const deps: AdapterDeps = {
          logger: logger.child({ adapter: name }),
          homeDir: config.homeDir,
          cacheDir: join(config.homeDir, "cache"),
          kv: state.kv(name),
          webhookPath: `/webhooks/${name}`,
          mediaMaxBytes: config.media.maxBytes,
          isAllowed: (userId: string) => runner.access.isAllowed(name, userId),
          isAddressed: (message) =>
            runner.isAddressed(
              name === module.name
                ? message
                : { ...message, platform: name, chat: { ...message.chat, platform: name } },
            ),
          commandMenu: () => runner.commands.menu(),
          commandMenuReady: menuReady,
          services,
        };
        const adapter = await module.create(section, deps);
        adapters.push(name === module.name ? adapter : accountAdapter(adapter, name, ownText(name)));
      } catch (err) {
        const reason = ownText(name)(describeError(err));
        failed.set(name, reason);
        logger.error({ platform: name, error: reason }, "adapter could not be created");
      }
    }
  }
  for (const adapter of adapters) runner.addAdapter(adapter);
  return { api, adapters, failed };
}

/** What an account's adapter errors say, with the account's own variables (`TELEGRAM_FAMILY_…`). */
function ownText(name: string): (text: string) => string {
  return (text) => accountVariables(text, name, envTable());
}

/**
 * Starts every adapter at once; those that started go to `started`, the others to `failed`. With
 * `ready`, each inbound message waits for it before the runner takes it (the agent side, plugins and
 * their commands load after the adapters started): an adapter confirms a message to its platform only
 * once the runner recorded it, so none is lost meanwhile; if `ready` rejects, none is recorded.
 */
export async function startAdapters(
  adapters: readonly PlatformAdapter[],
  parts: {
    runner: GatewayRunner;
    started: Map<string, PlatformAdapter>;
    failed: Map<string, string>;
    logger: Logger;
    ready?: Promise<unknown> | undefined;
  },
): Promise<void> {
  const { runner, started, failed, logger, ready } = parts;
  const handle: InboundHandler = ready
    ? (message) => ready.then(() => runner.handleInbound(message))
    : runner.handleInbound;
  await Promise.all(
    adapters.map(async (adapter) => {
      try {
        await adapter.start(handle);
        started.set(adapter.platform, adapter);
      } catch (err) {
        failed.set(adapter.platform, describeError(err));
        runner.adapters.delete(adapter.platform);
        logger.error({ platform: adapter.platform, error: describeError(err) }, "adapter failed to start");
      }
    }),
  );
}

/** The OpenAI-compatible API server, reporting each reply's token usage from the usage ledger. */
async function apiAdapter(
  config: HeraldConfig,
  state: SqliteState,
  logger: Logger,
  chat: ChatPort,
): Promise<ApiAdapter> {
  const { createApiAdapter } = await import("../adapters/api/index.js");
  return createApiAdapter(
    {
      key: config.apiServer.key,
      modelName: config.model.default ?? config.model.name,
      usageOf: (messageId) => {
        const lines = state.usage.forTurn(turnIdFor("api", messageId));
        if (lines.length === 0) return undefined;
        return {
          promptTokens: lines.reduce((n, l) => n + l.promptTokens, 0),
          completionTokens: lines.reduce((n, l) => n + l.completionTokens, 0),
          cachedTokens: lines.reduce((n, l) => n + l.cachedTokens, 0),
        };
      },
      chat,
      responses: state.responses,
      responsesTtlMs: config.apiServer.responsesTtlDays * 86_400_000,
    },
    { logger },
  );
}
