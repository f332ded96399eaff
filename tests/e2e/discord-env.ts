/**
 * Shared set-up of the Discord end-to-end tests: a fake Discord, the real adapter pointed at it, and a
 * recording inbound handler (adapter-level tests), all torn down by `stop()`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { vi } from "vitest";
import {
  createDiscordAdapter,
  type DiscordAdapter,
  type DiscordAdapterConfig,
} from "../../adapters/discord/index.js";
import { silentLogger } from "../../core/logger.js";
import type { InboundMessage, InboundOutcome, KeyValueStore } from "../../core/types.js";
import { type FakeDiscord, type FakeDiscordOptions, startFakeDiscord } from "../fakes/discord/index.js";

export { IDS } from "../fakes/discord/index.js";

/** A KeyValueStore in memory (the gateway's is SQLite); share one across restarts to keep state. */
export function memoryKv(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    get: (k) => data.get(k),
    set: (k, v) => void data.set(k, v),
    delete: (k) => void data.delete(k),
  };
}

export interface DiscordEnv {
  fake: FakeDiscord;
  adapter: DiscordAdapter;
  /** Every message the adapter handed to the gateway, in order. */
  received: InboundMessage[];
  kv: ReturnType<typeof memoryKv>;
  cacheDir: string;
  /** Builds another adapter on the same fake (restart tests). */
  newAdapter(config?: Partial<DiscordAdapterConfig>): DiscordAdapter;
  /** Waits until `count` messages were received and returns the last one. */
  nextMessage(count?: number): Promise<InboundMessage>;
  stop(): Promise<void>;
}

export interface DiscordEnvOptions {
  fake?: FakeDiscordOptions;
  adapter?: Partial<DiscordAdapterConfig>;
  /** What the recording handler answers. @defaultValue "accepted" */
  outcome?: (message: InboundMessage) => InboundOutcome | Promise<InboundOutcome>;
  /** Don't start the adapter (start-up failure tests). */
  noStart?: boolean;
}

/** Starts a fake Discord and a started adapter with a recording handler. */
export async function startDiscordEnv(options: DiscordEnvOptions = {}): Promise<DiscordEnv> {
  const fake = await startFakeDiscord(options.fake);
  const cacheDir = mkdtempSync(join(tmpdir(), "herald-discord-"));
  const kv = memoryKv();
  const received: InboundMessage[] = [];
  const adapters: DiscordAdapter[] = [];
  const newAdapter = (config: Partial<DiscordAdapterConfig> = {}) => {
    const adapter = createDiscordAdapter(
      { botToken: fake.token, apiUrl: fake.url, registerCommands: false, ...options.adapter, ...config },
      { logger: silentLogger(), homeDir: cacheDir, cacheDir, kv },
    );
    adapters.push(adapter);
    return adapter;
  };
  const adapter = newAdapter();
  const handler = async (message: InboundMessage) => {
    received.push(message);
    return options.outcome ? options.outcome(message) : "accepted";
  };
  if (!options.noStart) await adapter.start(handler);
  return {
    fake,
    adapter,
    received,
    kv,
    cacheDir,
    newAdapter,
    async nextMessage(count = received.length + 1) {
      await vi.waitFor(() => {
        if (received.length < count) throw new Error(`waiting for message ${count}, have ${received.length}`);
      });
      return received[count - 1]!;
    },
    async stop() {
      for (const a of adapters) await a.stop();
      await fake.close();
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}

/** Handler for `start()` in tests that build adapters by hand. */
export function recorder(into: InboundMessage[]): (m: InboundMessage) => Promise<InboundOutcome> {
  return async (m) => {
    into.push(m);
    return "accepted";
  };
}
