/**
 * The SMS driver of the PlatformAdapter contract: the real adapter (the `twilio` SDK with its request
 * client sent to the fake) against the fake Twilio REST API. SMS has no edit, delete or typing.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMS_MAX_CHARS } from "../../../adapters/sms/format.js";
import { createSmsAdapter } from "../../../adapters/sms/index.js";
import { silentLogger } from "../../../core/logger.js";
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  FROM_NUMBER,
  PUBLIC_WEBHOOK,
  startFakeTwilio,
} from "../../fakes/twilio/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const USER = "+15550000042";

export const smsDriver: PlatformDriver = {
  platform: "sms",
  abilities: { edit: false, deleteMessage: false, sendTyping: false, status: true },
  maxChars: SMS_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 2000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeTwilio();
    const adapter = createSmsAdapter(
      {
        accountSid: ACCOUNT_SID,
        authToken: AUTH_TOKEN,
        fromNumber: FROM_NUMBER,
        webhookUrl: PUBLIC_WEBHOOK,
        apiUrl: fake.url,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-sms-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "sms", chatId: USER },
      delivered: () => fake.sentTo(USER).map((m) => ({ id: m.sid, text: m.body })),
      rateLimitNextSend: () =>
        fake.fault("messages", {
          status: 429,
          headers: { "Retry-After": "2" },
          body: {
            code: 20429,
            message: "Too Many Requests",
            more_info: "https://www.twilio.com/docs/errors/20429",
            status: 429,
          },
        }),
      refuseAuthOnNextSend: () =>
        fake.fault("messages", {
          status: 401,
          body: {
            code: 20003,
            message: "Authenticate",
            more_info: "https://www.twilio.com/docs/errors/20003",
            status: 401,
          },
        }),
      unknownChat: () => ({ platform: "sms", chatId: "not-a-number" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
