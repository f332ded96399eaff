/**
 * The Mattermost driver of the PlatformAdapter contract: the real adapter (Client4 routes, its REST
 * calls and the `ws` event socket) against the fake Mattermost server, which keeps posts, so what a
 * channel shows is read from it (edits applied, deletions left out).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MATTERMOST_MAX_CHARS } from "../../../adapters/mattermost/format.js";
import { createMattermostAdapter } from "../../../adapters/mattermost/index.js";
import { silentLogger } from "../../../core/logger.js";
import { BOT_TOKEN, mmId, startFakeMattermost } from "../../fakes/mattermost/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const CHANNEL = mmId("town-square");

export const mattermostDriver: PlatformDriver = {
  platform: "mattermost",
  abilities: { edit: true, deleteMessage: true, sendTyping: true, status: true },
  maxChars: MATTERMOST_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 3000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeMattermost();
    fake.addChannel(CHANNEL, "O", "town-square");
    const adapter = createMattermostAdapter(
      { url: fake.url, token: BOT_TOKEN, reconnectBaseMs: 50 },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-mattermost-")),
        kv: memoryKv(),
      },
    );
    const all = () => fake.posts.filter((p) => p.channel_id === CHANNEL);
    return {
      adapter,
      chat: { platform: "mattermost", chatId: CHANNEL },
      delivered: () => fake.botPostsIn(CHANNEL).map((p) => ({ id: p.id, text: p.message })),
      currentText: (id) => all().find((p) => p.id === id)?.message,
      isDeleted: (id) => all().find((p) => p.id === id)?.delete_at !== 0,
      // Mattermost's rate limiter answers in plain text with the wait in its headers.
      rateLimitNextSend: () =>
        fake.fault("POST posts", {
          status: 429,
          text: "limit exceeded\n",
          headers: { "Retry-After": "3", "X-RateLimit-Reset": "3" },
        }),
      refuseAuthOnNextSend: () =>
        fake.fault("POST posts", {
          status: 401,
          body: {
            id: "api.context.session_expired.app_error",
            message: "Invalid or expired session",
            status_code: 401,
          },
        }),
      unknownChat: () => ({ platform: "mattermost", chatId: mmId("no-such-channel") }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
