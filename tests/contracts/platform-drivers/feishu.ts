/**
 * The Feishu / Lark driver of the PlatformAdapter contract: the real adapter (the SDK's Client) against
 * the fake Open API, which keeps messages, so what a chat shows is read from it (cards' Markdown,
 * patches applied, recalled messages left out).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FEISHU_MAX_CHARS } from "../../../adapters/feishu/format.js";
import { createFeishuAdapter } from "../../../adapters/feishu/index.js";
import { silentLogger } from "../../../core/logger.js";
import {
  APP_ID,
  APP_SECRET,
  ENCRYPT_KEY,
  startFakeFeishu,
  VERIFICATION_TOKEN,
} from "../../fakes/feishu/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const CHAT = "oc_0000000000000000000000000000team";

export const feishuDriver: PlatformDriver = {
  platform: "feishu",
  abilities: { edit: true, deleteMessage: true, sendTyping: false, status: true },
  maxChars: FEISHU_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 3000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeFeishu();
    fake.addChat(CHAT);
    const adapter = createFeishuAdapter(
      {
        appId: APP_ID,
        appSecret: APP_SECRET,
        encryptKey: ENCRYPT_KEY,
        verificationToken: VERIFICATION_TOKEN,
        apiUrl: fake.url,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-feishu-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "feishu", chatId: CHAT },
      delivered: () => fake.botTextsIn(CHAT).map((m) => ({ id: m.id, text: m.text })),
      currentText: (id) => fake.textOf(id),
      isDeleted: (id) => fake.messages.find((m) => m.message_id === id)?.deleted ?? true,
      rateLimitNextSend: () =>
        fake.fault("POST messages", {
          status: 429,
          body: { code: 99991400, msg: "request trigger frequency limit" },
          headers: { "x-ogw-ratelimit-limit": "50", "x-ogw-ratelimit-reset": "3" },
        }),
      refuseAuthOnNextSend: () => fake.revokeSecret(),
      unknownChat: () => ({ platform: "feishu", chatId: "oc_nosuchchat000000000000000000000" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
