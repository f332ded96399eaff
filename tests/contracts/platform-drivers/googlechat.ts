/**
 * The Google Chat driver of the PlatformAdapter contract: the real adapter (google-auth-library's JWT
 * grant, the Chat REST API) against the fake Google Chat, which keeps the app's messages, so what a
 * space shows is read from it (patches applied, deletions left out). Chat has no typing indicator.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GOOGLE_CHAT_MAX_CHARS } from "../../../adapters/googlechat/format.js";
import { createGooglechatAdapter } from "../../../adapters/googlechat/index.js";
import { silentLogger } from "../../../core/logger.js";
import { PROJECT_NUMBER, startFakeGoogleChat } from "../../fakes/googlechat/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const SPACE = "spaces/AAAAcontract";

export const googlechatDriver: PlatformDriver = {
  platform: "googlechat",
  abilities: { edit: true, deleteMessage: true, sendTyping: false, status: true },
  maxChars: GOOGLE_CHAT_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 2000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeGoogleChat();
    fake.addSpace(SPACE);
    const adapter = createGooglechatAdapter(
      {
        serviceAccount: fake.serviceAccountPath,
        audience: PROJECT_NUMBER,
        apiUrl: fake.url,
        certsUrl: fake.certsUrl,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-googlechat-")),
        kv: memoryKv(),
      },
    );
    const all = () => fake.messages.filter((m) => m.space === SPACE);
    return {
      adapter,
      chat: { platform: "googlechat", chatId: SPACE },
      delivered: () => fake.botMessagesIn(SPACE).map((m) => ({ id: m.name, text: m.text })),
      currentText: (id) => all().find((m) => m.name === id)?.text,
      isDeleted: (id) => all().find((m) => m.name === id)?.deleted !== false,
      rateLimitNextSend: () =>
        fake.fault("POST messages", {
          status: 429,
          body: { error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded" } },
          headers: { "Retry-After": "2" },
        }),
      refuseAuthOnNextSend: () =>
        fake.fault("POST messages", {
          status: 401,
          body: {
            error: {
              code: 401,
              status: "UNAUTHENTICATED",
              message: "Request had invalid authentication credentials.",
            },
          },
        }),
      unknownChat: () => ({ platform: "googlechat", chatId: "spaces/NOSUCHSPACE" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
