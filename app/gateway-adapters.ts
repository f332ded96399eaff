/**
 * The gateway's adapters (part of `herald gateway`'s composition root): every configured platform from
 * its module, each with its dependencies, started before the runner exists (its module graph loads once
 * they poll) against a {@link RunnerPort}. The API server, the web chat and the adapters a caller brings
 * (`herald chat`'s terminal, tests) are built with the runner (gateway-core.ts). A platform that cannot
 * be created or started is recorded with the reason and logged; the others run on.
 */
import { join } from "node:path";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { PlatformModule } from "../core/platform.js";
import type {
  AdapterDeps,
  AdapterServices,
  InboundHandler,
  InboundMessage,
  PlatformAdapter,
} from "../core/types.js";
import { AccessPolicy } from "../gateway/access.js";
import type { GatewayRunner } from "../gateway/index.js";
import type { SqliteState } from "../sessions/index.js";
import { configuredAccounts, configuredPlatforms, envTable, type HeraldConfig, sectionOf } from "./config.js";
import { accountVariables } from "./config-accounts.js";
import { accountAdapter } from "./platform-accounts.js";
import { userIdNormalisers } from "./platforms.js";

/**
 * The runner as the platform adapters reach it, before and after it exists. Until {@link bind}: access
 * is decided by a policy of its own over the same config and pairing store (the runner's decides the
 * same), a message counts as addressed (its files are fetched, as without the check), the command menu
 * is empty (menus wait for `commandMenuReady`), and inbound messages wait for `ready`.
 */
export class RunnerPort {
  private runner: GatewayRunner | undefined;
  private readonly access: AccessPolicy;

  constructor(config: HeraldConfig, state: SqliteState) {
    this.access = new AccessPolicy(config, state.pairing, userIdNormalisers);
  }

  bind(runner: GatewayRunner): void {
    this.runner = runner;
  }

  isAllowed(platform: string, userId: string): boolean {
    return (this.runner?.access ?? this.access).isAllowed(platform, userId);
  }

  isAddressed(message: InboundMessage): boolean {
    return this.runner ? this.runner.isAddressed(message) : true;
  }

  menu(): ReturnType<GatewayRunner["commands"]["menu"]> {
    return this.runner ? this.runner.commands.menu() : [];
  }

  /** The inbound handler: each message waits for `ready` (the runner bound, the agent side loaded). */
  inbound(ready: Promise<unknown>): InboundHandler {
    return (message) => ready.then(() => this.runner!.handleInbound(message));
  }

  /** A platform that failed to start leaves the runner's adapters (when it has them). */
  drop(platform: string): void {
    this.runner?.adapters.delete(platform);
  }
}

/** Builds the configured platforms that `which` selects (not with `localOnly`), each against `port`. */
export async function createPlatformAdapters(
  config: HeraldConfig,
  parts: {
    state: SqliteState;
    port: RunnerPort;
    logger: Logger;
    /** Platforms that could not be created get their reason here. */
    failed: Map<string, string>;
    /** The platforms to build, by module (a further account shares its platform's). */
    which: (module: PlatformModule) => boolean;
    services: AdapterServices;
    /** Settles once the plugins' and MCP servers' commands are in the runner's command menu. */
    menuReady?: Promise<unknown> | undefined;
  },
): Promise<PlatformAdapter[]> {
  const { state, port, logger, menuReady, services, failed } = parts;
  const adapters: PlatformAdapter[] = [];
  const platforms = [
    ...configuredPlatforms(config).map((module) => ({
      name: module.name,
      module,
      section: sectionOf(config, module),
    })),
    ...configuredAccounts(config),
  ].filter(({ module }) => parts.which(module));
  for (const { name, module, section } of platforms) {
    try {
      const deps: AdapterDeps = {
        logger: logger.child({ adapter: name }),
        homeDir: config.homeDir,
        cacheDir: join(config.homeDir, "cache"),
        kv: state.kv(name),
        webhookPath: `/webhooks/${name}`,
        mediaMaxBytes: config.media.maxBytes,
        isAllowed: (userId: string) => port.isAllowed(name, userId),
        isAddressed: (message) =>
          port.isAddressed(
            name === module.name
              ? message
              : { ...message, platform: name, chat: { ...message.chat, platform: name } },
          ),
        commandMenu: () => port.menu(),
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
  return adapters;
}

/** The Home Assistant the `ha` toolset reaches, for the platform's notifications. */
export function homeAssistantApi(config: HeraldConfig): AdapterServices["homeAssistantApi"] {
  const { url, token } = config.ha;
  return url && token ? { url: url.replace(/\/+$/, ""), token } : undefined;
}

/** What an account's adapter errors say, with the account's own variables (`TELEGRAM_FAMILY_…`). */
function ownText(name: string): (text: string) => string {
  return (text) => accountVariables(text, name, envTable());
}

/**
 * Starts every adapter at once; those that started go to `started`, the others to `failed`. An adapter
 * confirms a message to its platform only once `handle` settled it (the runner recorded it), so none is
 * lost while the runner and the agent side load; if they fail, none is recorded.
 */
export async function startAdapters(
  adapters: readonly PlatformAdapter[],
  parts: {
    handle: InboundHandler;
    port: RunnerPort;
    started: Map<string, PlatformAdapter>;
    failed: Map<string, string>;
    logger: Logger;
  },
): Promise<void> {
  const { handle, port, started, failed, logger } = parts;
  await Promise.all(
    adapters.map(async (adapter) => {
      try {
        await adapter.start(handle);
        started.set(adapter.platform, adapter);
      } catch (err) {
        failed.set(adapter.platform, describeError(err));
        port.drop(adapter.platform);
        logger.error({ platform: adapter.platform, error: describeError(err) }, "adapter failed to start");
      }
    }),
  );
}
