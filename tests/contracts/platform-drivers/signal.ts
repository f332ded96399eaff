/**
 * The Signal driver of the PlatformAdapter contract: the real adapter against the fake signal-cli HTTP
 * daemon (JSON-RPC + SSE). Signal edits and deletions are not used (progress shows as typing).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SIGNAL_MAX_CHARS } from "../../../adapters/signal/format.js";
import { createSignalAdapter } from "../../../adapters/signal/index.js";
import { silentLogger } from "../../../core/logger.js";
import { BOT_NUMBER, startFakeSignal } from "../../fakes/signal/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const USER = "+4915100000002";

export const signalDriver: PlatformDriver = {
  platform: "signal",
  abilities: { edit: false, deleteMessage: false, sendTyping: true, status: true },
  maxChars: SIGNAL_MAX_CHARS,
  errors: {
    // signal-cli names no wait for a rate limit.
    rateLimited: { code: "platform_rate_limited", retryAfterMs: undefined },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeSignal();
    const adapter = createSignalAdapter(
      { account: BOT_NUMBER, httpUrl: fake.url },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-signal-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "signal", chatId: USER },
      delivered: () => fake.sentTo(USER).map((m) => ({ id: String(m.timestamp), text: m.text })),
      rateLimitNextSend: () =>
        fake.fault("send", { error: { code: -5, message: "Rate limit exceeded: 3600" } }),
      refuseAuthOnNextSend: () =>
        fake.fault("send", { error: { code: -1, message: `User ${BOT_NUMBER} is not registered.` } }),
      unknownChat: () => ({ platform: "signal", chatId: "group.bm9zdWNoZ3JvdXA=" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
