/**
 * Shared setup of the Matrix end-to-end tests: the fake homeserver, an in-memory key-value store that
 * survives "restarts" of the adapter, and a recording stand-in for the gateway (ledger-style dedupe).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createMatrixAdapter,
  type MatrixAdapter,
  type MatrixAdapterConfig,
} from "../../adapters/matrix/index.js";
import { silentLogger } from "../../core/logger.js";
import type { InboundMessage, InboundOutcome, KeyValueStore } from "../../core/types.js";
import { type FakeHomeserver, startFakeHomeserver } from "../fakes/matrix/index.js";

export const ALICE = "@alice:localhost";
export const BOB = "@bob:localhost";
export const MALLORY = "@mallory:localhost";

/** A Map-backed `KeyValueStore` (the gateway's is SQLite). */
export class MemoryKv implements KeyValueStore {
  readonly map = new Map<string, string>();
  get(key: string): string | undefined {
    return this.map.get(key);
  }
  set(key: string, value: string): void {
    this.map.set(key, value);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
}

/** A fixture from `tests/fixtures/matrix/`, parsed. */
export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(
    readFileSync(join(import.meta.dirname, "../fixtures/matrix", `${name}.json`), "utf8"),
  ) as T;
}

export interface MatrixEnv {
  fake: FakeHomeserver;
  kv: MemoryKv;
  cacheDir: string;
  /** Every message the adapter passed to the gateway, in order (duplicates included). */
  received: InboundMessage[];
  adapter: MatrixAdapter | undefined;
  config(overrides?: Partial<MatrixAdapterConfig>): MatrixAdapterConfig;
  /** Starts (or restarts) an adapter on the same store. */
  start(overrides?: Partial<MatrixAdapterConfig>): Promise<MatrixAdapter>;
  stopAdapter(): Promise<void>;
  /** Waits until `count` messages arrived at the gateway stand-in. */
  waitForReceived(count: number, timeoutMs?: number): Promise<InboundMessage[]>;
  close(): Promise<void>;
}

export async function startMatrixEnv(): Promise<MatrixEnv> {
  const fake = await startFakeHomeserver();
  fake.setDisplayName(ALICE, "Alice");
  fake.setDisplayName(BOB, "Bob");
  fake.setDisplayName(MALLORY, "Mallory");
  const kv = new MemoryKv();
  const cacheDir = mkdtempSync(join(tmpdir(), "herald-matrix-cache-"));
  const received: InboundMessage[] = [];
  const seen = new Set<string>();
  const handler = async (m: InboundMessage): Promise<InboundOutcome> => {
    received.push(m);
    if (seen.has(m.messageId)) return "duplicate";
    seen.add(m.messageId);
    return "accepted";
  };
  const env: MatrixEnv = {
    fake,
    kv,
    cacheDir,
    received,
    adapter: undefined,
    config(overrides = {}) {
      return {
        homeserver: fake.url,
        accessToken: fake.botAccessToken,
        allowedUsers: [ALICE],
        maxAttachmentBytes: 1024 * 1024,
        cacheDir,
        pollTimeoutMs: 2000,
        ...overrides,
      };
    },
    async start(overrides) {
      await env.stopAdapter();
      const adapter = createMatrixAdapter(env.config(overrides), {
        logger: silentLogger(),
        homeDir: cacheDir,
        cacheDir,
        kv,
      });
      await adapter.start(handler);
      env.adapter = adapter;
      return adapter;
    },
    async stopAdapter() {
      await env.adapter?.stop();
      env.adapter = undefined;
    },
    waitForReceived(count, timeoutMs) {
      return fake.waitFor(() => (received.length >= count ? received : undefined), timeoutMs);
    },
    async close() {
      await env.stopAdapter();
      await fake.close();
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
  return env;
}
