/**
 * The Home Assistant driver of the PlatformAdapter contract: the real adapter against the fake Home
 * Assistant. A send that no conversation request waits for is a notification over Home Assistant's
 * REST API, so what a chat holds is read from the fake's notifications: persistent ones (their id is
 * the message id the adapter reports) for a conversation, the notify service a chat names for
 * `notify.*` chats. Rate limits are a 429 with Retry-After (a proxy in front), a refusal a 401, an
 * unknown chat a notify service Home Assistant does not have (400).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHomeassistantAdapter } from "../../../adapters/homeassistant/index.js";
import { silentLogger } from "../../../core/logger.js";
import { type FakeHomeAssistant, HA_TOKEN, startFakeHomeAssistant } from "../../fakes/homeassistant/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

export const homeassistantDriver: PlatformDriver = {
  platform: "homeassistant",
  abilities: { edit: false, deleteMessage: false, sendTyping: false, status: true },
  maxChars: undefined,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 2000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake: FakeHomeAssistant = await startFakeHomeAssistant();
    const adapter = createHomeassistantAdapter(
      { webhookSecret: "contract-secret-0123456789", api: { url: fake.url, token: HA_TOKEN } },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-homeassistant-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "homeassistant", chatId: "01JCONVERSATIONCONTRACT0001" },
      delivered: () =>
        fake.notifications
          .filter((n) => n.service === "persistent_notification.create")
          .map((n) => ({ id: n.id, text: n.message })),
      rateLimitNextSend: () =>
        fake.fault({ status: 429, body: { message: "Too many requests" }, retryAfterS: 2 }),
      refuseAuthOnNextSend: () => fake.fault({ status: 401, body: { message: "Unauthorized" } }),
      unknownChat: () => ({ platform: "homeassistant", chatId: "notify.no_such_phone" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
