/**
 * The LINE driver of the PlatformAdapter contract: the real adapter (`@line/bot-sdk`'s clients) against
 * the fake LINE Messaging API. Sends without a reply token are pushes; LINE has no edit or delete, and
 * its typing is the loading animation.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LINE_MAX_CHARS } from "../../../adapters/line/format.js";
import { createLineAdapter } from "../../../adapters/line/index.js";
import { silentLogger } from "../../../core/logger.js";
import { CHANNEL_SECRET, CHANNEL_TOKEN, lineId, startFakeLine } from "../../fakes/line/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const USER = lineId("U", "ann");

export const lineDriver: PlatformDriver = {
  platform: "line",
  abilities: { edit: false, deleteMessage: false, sendTyping: true, status: true },
  maxChars: LINE_MAX_CHARS,
  errors: {
    // LINE's 429 names no wait.
    rateLimited: { code: "platform_rate_limited", retryAfterMs: undefined },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeLine();
    fake.chats.add(USER);
    const adapter = createLineAdapter(
      {
        channelSecret: CHANNEL_SECRET,
        channelAccessToken: CHANNEL_TOKEN,
        apiUrl: fake.url,
        dataUrl: fake.url,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-line-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "line", chatId: USER },
      delivered: () => fake.sentTo(USER).map((m) => ({ id: m.id, text: m.text })),
      rateLimitNextSend: () =>
        fake.fault("push", {
          status: 429,
          body: { message: "The API rate limit has been exceeded. Try again later." },
        }),
      refuseAuthOnNextSend: () =>
        fake.fault("push", {
          status: 401,
          body: {
            message:
              "Authentication failed. Confirm that the access token in the authorization header is valid.",
          },
        }),
      unknownChat: () => ({ platform: "line", chatId: lineId("C", "no-such-group") }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
