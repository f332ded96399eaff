/**
 * Shared setup of the WhatsApp tests: a temp HERALD_HOME, the fake socket factory, a logger whose lines
 * the test can read, manual timers (to see and fire the scheduled reconnect), and a recording stand-in
 * for the gateway's inbound handler.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createWhatsAppAdapter, type WhatsAppAdapter } from "../../adapters/whatsapp/index.js";
import { whatsappPlatform } from "../../adapters/whatsapp/module.js";
import type { Timers, WhatsAppAdapterOptions } from "../../adapters/whatsapp/types.js";
import { loadConfig, sectionOf } from "../../app/config.js";
import type { Logger } from "../../core/logger.js";
import type { AdapterDeps, InboundMessage, InboundOutcome, KeyValueStore } from "../../core/types.js";
import { FakeWhatsApp, seedLinkedCreds } from "../fakes/whatsapp/index.js";
import { gatewayIsAddressed } from "../helpers/addressed.js";

export class MemoryKv implements KeyValueStore {
  private readonly map = new Map<string, string>();
  get(key: string) {
    return this.map.get(key);
  }
  set(key: string, value: string) {
    this.map.set(key, value);
  }
  delete(key: string) {
    this.map.delete(key);
  }
}

/** A pino logger that keeps its lines as objects. */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

/** Timers that only record: the test fires them. */
export class ManualTimers implements Timers {
  readonly scheduled: { ms: number; fn: () => void; id: number; done: boolean }[] = [];
  private next = 0;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.next;
    this.scheduled.push({ ms, fn, id, done: false });
    return id;
  }
  clearTimeout(handle: unknown): void {
    const t = this.scheduled.find((s) => s.id === handle);
    if (t) t.done = true;
  }
  /** Timers scheduled and neither fired nor cleared. */
  pending() {
    return this.scheduled.filter((s) => !s.done);
  }
  /** Fires every pending timer. */
  fireAll(): void {
    for (const t of this.pending()) {
      t.done = true;
      t.fn();
    }
  }
}

export interface WhatsAppEnv {
  home: string;
  authDir: string;
  fake: FakeWhatsApp;
  adapter: WhatsAppAdapter;
  lines: Record<string, unknown>[];
  qrs: string[];
  received: InboundMessage[];
  /** What the handler answers; may be replaced per test. */
  respond: (message: InboundMessage) => Promise<InboundOutcome>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface EnvOptions {
  linked?: boolean;
  env?: Record<string, string>;
  options?: WhatsAppAdapterOptions;
}

/** Builds (does not start) an adapter on a fresh HERALD_HOME with the fake socket. */
export async function whatsAppEnv(opts: EnvOptions = {}): Promise<WhatsAppEnv> {
  const home = mkdtempSync(join(tmpdir(), "herald-wa-"));
  const authDir = join(home, "whatsapp");
  if (opts.linked ?? true) await seedLinkedCreds(authDir);
  const config = loadConfig({ env: { HERALD_HOME: home, ...opts.env } });
  const { logger, lines } = captureLogger();
  const fake = new FakeWhatsApp();
  const qrs: string[] = [];
  const deps: AdapterDeps = {
    logger,
    homeDir: home,
    cacheDir: join(home, "cache"),
    kv: new MemoryKv(),
    mediaMaxBytes: config.media.maxBytes,
    isAddressed: gatewayIsAddressed,
  };
  const adapter = createWhatsAppAdapter(sectionOf(config, whatsappPlatform), deps, {
    socketFactory: fake.factory,
    onQr: (qr) => qrs.push(qr),
    ...opts.options,
  });
  const env: WhatsAppEnv = {
    home,
    authDir,
    fake,
    adapter,
    lines,
    qrs,
    received: [],
    respond: async () => "accepted",
    start: () =>
      adapter.start(async (message) => {
        env.received.push(message);
        fake.notify();
        return env.respond(message);
      }),
    async close() {
      await adapter.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
  return env;
}
