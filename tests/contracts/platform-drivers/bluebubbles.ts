/**
 * The BlueBubbles (iMessage) driver of the PlatformAdapter contract: the real adapter (plain fetch,
 * there is no vendor SDK) against the fake BlueBubbles server. iMessage through BlueBubbles has no
 * edit or delete here; typing needs the Private API, which this driver turns on.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BLUEBUBBLES_MAX_CHARS } from "../../../adapters/bluebubbles/format.js";
import { createBlueBubblesAdapter } from "../../../adapters/bluebubbles/index.js";
import { silentLogger } from "../../../core/logger.js";
import { dmGuid, groupGuid, SERVER_PASSWORD, startFakeBlueBubbles } from "../../fakes/bluebubbles/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const CHAT = dmGuid("+15550000042");

export const bluebubblesDriver: PlatformDriver = {
  platform: "bluebubbles",
  abilities: { edit: false, deleteMessage: false, sendTyping: true, status: true },
  maxChars: BLUEBUBBLES_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 3000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeBlueBubbles();
    fake.chats.add(CHAT);
    const adapter = createBlueBubblesAdapter(
      { url: fake.url, password: SERVER_PASSWORD, privateApi: true },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-bb-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "bluebubbles", chatId: CHAT },
      delivered: () => fake.sentTo(CHAT).map((m) => ({ id: m.guid, text: m.text })),
      // BlueBubbles itself has no rate limiter; a reverse proxy in front of it (nginx, Cloudflare) does.
      rateLimitNextSend: () =>
        fake.fault("text", {
          status: 429,
          headers: { "Retry-After": "3" },
          body: { status: 429, message: "Too Many Requests" },
        }),
      refuseAuthOnNextSend: () =>
        fake.fault("text", {
          status: 401,
          body: {
            status: 401,
            message: "Unauthorized",
            error: {
              type: "Authentication Error",
              message: "You are not authorized to access this resource",
            },
          },
        }),
      unknownChat: () => ({ platform: "bluebubbles", chatId: groupGuid("no-such-chat") }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
