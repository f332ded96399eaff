/**
 * Telegram scenario: the whole gateway in-process (as the test harness starts it) with the real Telegram
 * adapter long-polling the fake Bot API, and the fake model answering at once. Many private chats each
 * send their turns one after another; a turn's latency runs from the update being queued at the fake
 * Bot API to the bot's reply arriving there. Run once with Telegram's send limits (what a real bot gets:
 * ~1 message/s per chat, 30/s per bot) and once with them lifted (the gateway's own cost).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTelegramAdapter } from "../adapters/telegram/index.js";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { silentLogger } from "../core/logger.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { machineLine, median, percentile, round } from "./lib.js";

export interface TelegramBenchOptions {
  chats: number;
  turnsPerChat: number;
  /** Apply Telegram's send limits in the adapter (false: lifted, to see the gateway's own cost). @defaultValue true */
  telegramLimits?: boolean;
}

export interface TelegramBenchResult {
  turnsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const LIFTED = { perChatPerSecond: 1e6, perChatBurst: 1e6, perGroupPerMinute: 1e9, globalPerSecond: 1e6 };

/** Runs the scenario; every turn is real (ledger, session, journal, queue, agent, outbox, Bot API calls). */
export async function benchTelegram(opts: TelegramBenchOptions): Promise<TelegramBenchResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: "ok" }));
  const fake = await startFakeTelegram();
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-tg-"));
  const config = loadConfig({
    env: {
      HERALD_HOME: homeDir,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      API_SERVER_ENABLED: "false",
      GATEWAY_ALLOW_ALL_USERS: "true",
    },
  });
  const kv = new Map<string, string>();
  const adapter = createTelegramAdapter(
    { botToken: fake.token, apiRoot: fake.url, limits: opts.telegramLimits === false ? LIFTED : undefined },
    {
      logger: silentLogger(),
      homeDir,
      cacheDir: join(homeDir, "cache"),
      kv: { get: (k) => kv.get(k), set: (k, v) => void kv.set(k, v), delete: (k) => void kv.delete(k) },
    },
  );
  const gateway = await startGateway(config, { logger: silentLogger(), extraAdapters: [adapter] });
  try {
    const turn = async (chatId: number, i: number): Promise<number> => {
      const before = fake.botMessages(chatId).length;
      const t0 = performance.now();
      fake.userSends({ chatId, fromId: chatId, text: `turn ${i}` });
      await fake.waitFor(() => fake.botMessages(chatId).length > before, 120_000);
      return performance.now() - t0;
    };
    // Warm-up: one turn in a few chats (sessions, prepared statements, JIT).
    await Promise.all(Array.from({ length: 5 }, (_, c) => turn(9_000_000 + c, 0)));

    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: opts.chats }, async (_, c) => {
        for (let i = 0; i < opts.turnsPerChat; i++) latencies.push(await turn(1_000_000 + c, i));
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    // The last replies' deliveries are confirmed to the outbox before the gateway stops.
    await gateway.runner.outbox.idle();
    return {
      turnsPerSecond: round((opts.chats * opts.turnsPerChat) / seconds, 1),
      p50Ms: round(median(latencies)),
      p99Ms: round(percentile(latencies, 99)),
    };
  } finally {
    await gateway.stop();
    await adapter.stop();
    await fake.close();
    await llm.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

/** The BENCHMARKS.md section for one run with Telegram's limits and one with them lifted. */
export function telegramMarkdown(
  limited: TelegramBenchResult,
  lifted: TelegramBenchResult,
  opts: { chats: number; turnsPerChat: number },
  command: string,
): string {
  return `## Telegram, long polling through the fake Bot API

Command: \`${command}\` — ${machineLine()}. Gateway in-process (as the test harness starts it), the real
Telegram adapter polling a fake Bot API on 127.0.0.1, the fake model answering at once; ${opts.chats} private
chats send ${opts.turnsPerChat} turns each, one after another. Latency: update queued at the Bot API → reply
received there (typing and the reply both go through the adapter's send budget).

| figure | with Telegram's send limits | limits lifted |
|---|---|---|
| **throughput** | **${limited.turnsPerSecond} turns/s** | **${lifted.turnsPerSecond} turns/s** |
| update → reply latency p50 / p99 | ${limited.p50Ms} / ${limited.p99Ms} ms | ${lifted.p50Ms} / ${lifted.p99Ms} ms |

With the limits on, throughput is bounded by Telegram's 30 calls/s per bot and ~1 message/s per chat,
as a real bot is; the lifted run shows what the gateway itself costs per Telegram turn.`;
}
