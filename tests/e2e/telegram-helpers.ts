/**
 * Shared setup of the Telegram adapter tests: the fake Bot API, the real adapter pointed at it, a handler
 * that records what the gateway would receive, and a log sink to assert on.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, vi } from "vitest";
import {
  createTelegramAdapter,
  type TelegramAdapter,
  type TelegramAdapterConfig,
} from "../../adapters/telegram/index.js";
import { createLogger } from "../../core/logger.js";
import type { InboundHandler, InboundMessage, InboundOutcome, KeyValueStore } from "../../core/types.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { gatewayIsAddressed } from "../helpers/addressed.js";
import type { PlatformPerTest } from "../helpers/per-test.js";

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface TelegramRig {
  fake: FakeTelegram;
  adapter: TelegramAdapter;
  /** Messages the handler received, in order. */
  received: InboundMessage[];
  logs: LogLine[];
  homeDir: string;
  cacheDir: string;
  /** Starts the adapter with the recording handler (or `handler`, called after recording). */
  start(handler?: InboundHandler): Promise<void>;
  /** A new adapter on the same fake and home (a restart after a crash). */
  newAdapter(config?: Partial<TelegramAdapterConfig>): TelegramAdapter;
  /** Resolves when the handler has received `count` messages. */
  waitForReceived(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function memoryKv(): KeyValueStore {
  const map = new Map<string, string>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

/** Starts a fake Bot API and builds (not starts) an adapter on it. */
export async function telegramRig(config: Partial<TelegramAdapterConfig> = {}): Promise<TelegramRig> {
  const fake = await startFakeTelegram();
  const homeDir = mkdtempSync(join(tmpdir(), "herald-tg-"));
  const cacheDir = join(homeDir, "cache");
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: "debug",
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  const received: InboundMessage[] = [];
  const waiters = new Set<() => void>();
  const adapters: TelegramAdapter[] = [];
  const kv = memoryKv();
  const newAdapter = (extra: Partial<TelegramAdapterConfig> = {}) => {
    const adapter = createTelegramAdapter(
      {
        botToken: fake.token,
        apiRoot: fake.url,
        pollTimeoutSeconds: 5,
        backoffMs: 50,
        maxBackoffMs: 200,
        ...config,
        ...extra,
      },
      { logger, homeDir, cacheDir, kv, isAddressed: gatewayIsAddressed },
    );
    adapters.push(adapter);
    return adapter;
  };
  const adapter = newAdapter();
  return {
    fake,
    adapter,
    received,
    logs,
    homeDir,
    cacheDir,
    newAdapter,
    async start(handler) {
      await adapter.start(async (message): Promise<InboundOutcome> => {
        received.push(message);
        for (const w of [...waiters]) w();
        return handler ? handler(message) : "accepted";
      });
    },
    waitForReceived(count, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        if (received.length >= count) return resolve();
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`handler received ${received.length} of ${count} messages`));
        }, timeoutMs);
        const check = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async close() {
      for (const a of adapters) await a.stop();
      await fake.close();
      rmSync(homeDir, { recursive: true, force: true });
    },
  };
}

/**
 * Loads a fixture update (real-shaped, scrubbed) from tests/fixtures/telegram, without its `update_id`
 * (the fake numbers updates in the order a test queues them).
 */
export async function fixture(name: string): Promise<Record<string, unknown>> {
  const text = await readFile(new URL(`../fixtures/telegram/${name}.json`, import.meta.url), "utf8");
  const { update_id: _, ...update } = JSON.parse(text) as Record<string, unknown>;
  return update;
}

/**
 * A stand-in for the gateway's HTTP server: serves `/webhooks/telegram` by handing the web-standard
 * Request to `target().handleWebhook`.
 */
export async function webhookServer(
  target: () => TelegramAdapter | undefined,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method ?? "GET",
      headers,
      ...(req.method === "POST" ? { body: Buffer.concat(parts) } : {}),
    });
    const adapter = target();
    const response = adapter?.handleWebhook
      ? await adapter.handleWebhook(request)
      : new Response("no adapter", { status: 503 });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/telegram`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The whole gateway in front of the fake Telegram, configured by env as an operator would (users 111
 * and 222 allowed; `env` added on top). Reuses the test's fake when it already has one; `running`
 * tears both down after the test.
 */
export async function startTelegramGateway(
  running: PlatformPerTest<FakeTelegram>,
  env: Record<string, string> = {},
) {
  const fake = running.fake ?? running.trackFake(await startFakeTelegram());
  const h = await running.startHarness({
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_USERS: "111,222",
      ...env,
    },
  });
  return { fake, h };
}

/**
 * Waits until the bot's messages in `chatId` include `text`, and returns them. Use it after a tool call:
 * the progress line (a bot message deleted once the reply is out) may come first.
 */
export async function botSays(f: FakeTelegram, chatId: number, text: string): Promise<string[]> {
  await vi.waitFor(() => expect(f.botMessages(chatId).map((m) => m.text)).toContain(text), {
    timeout: 10_000,
  });
  return f.botMessages(chatId).map((m) => m.text ?? "");
}

/** Waits (up to 10 s) for `count` bot messages in the chat, or in one topic of it, and returns their texts. */
export async function botReplies(
  f: FakeTelegram,
  chatId: number,
  count: number,
  threadId?: number,
): Promise<string[]> {
  await vi.waitFor(() => expect(f.botMessages(chatId, threadId).length).toBeGreaterThanOrEqual(count), {
    timeout: 10_000,
  });
  return f.botMessages(chatId, threadId).map((m) => m.text ?? "");
}
