/**
 * The adapters the gateway can start, one entry per platform. Each entry imports its adapter lazily,
 * so an unconfigured platform's SDK is never loaded (cold start stays fast).
 */

import type { AdapterDeps, PlatformAdapter } from "../core/types.js";
import type { HeraldConfig } from "./config.js";

/** Builds one platform's adapter from the whole config. Throws ConfigError for a bad section. */
export type AdapterFactory = (config: HeraldConfig, deps: AdapterDeps) => Promise<PlatformAdapter>;

/** Platform name → factory. Add one line per adapter. */
export const adapterFactories: Record<string, AdapterFactory> = {
  discord: async (config, deps) =>
    (await import("../adapters/discord/index.js")).createDiscordAdapterFromConfig(config, deps),
  email: async (config, deps) =>
    (await import("../adapters/email/index.js")).createEmailAdapterFromConfig(config, deps),
  matrix: async (config, deps) =>
    (await import("../adapters/matrix/index.js")).createMatrixAdapterFromConfig(config, deps),
  slack: async (config, deps) =>
    (await import("../adapters/slack/index.js")).createSlackAdapterFromConfig(config, deps),
  telegram: async (config, deps) =>
    (await import("../adapters/telegram/index.js")).createTelegramAdapterFromConfig(config, deps),
  whatsapp: async (config, deps) =>
    (await import("../adapters/whatsapp/index.js")).createWhatsAppAdapter(config, deps),
};
