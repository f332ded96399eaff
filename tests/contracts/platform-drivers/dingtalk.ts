/**
 * The DingTalk driver of the PlatformAdapter contract: the real adapter (`dingtalk-stream`'s DWClient for
 * the stream, fetch for the OpenAPI) against the fake DingTalk, which records the robot messages sent.
 * DingTalk robot messages cannot be edited or recalled here, and there is no typing.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DINGTALK_MAX_CHARS } from "../../../adapters/dingtalk/format.js";
import { createDingtalkAdapter } from "../../../adapters/dingtalk/index.js";
import { silentLogger } from "../../../core/logger.js";
import { CLIENT_ID, CLIENT_SECRET, startFakeDingtalk } from "../../fakes/dingtalk/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const USER = "manager4711";

export const dingtalkDriver: PlatformDriver = {
  platform: "dingtalk",
  abilities: { edit: false, deleteMessage: false, sendTyping: false, status: true },
  maxChars: DINGTALK_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 2000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeDingtalk();
    fake.addUser(USER);
    const adapter = createDingtalkAdapter(
      { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, apiUrl: fake.url },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-dingtalk-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "dingtalk", chatId: USER },
      delivered: () => fake.sent.filter((s) => s.to === USER).map((s) => ({ text: s.text })),
      rateLimitNextSend: () =>
        fake.fault("robot/oToMessages/batchSend", {
          status: 429,
          body: { code: "Throttling", message: "too many requests" },
          headers: { "retry-after": "2" },
        }),
      refuseAuthOnNextSend: () => fake.revokeSecret(),
      unknownChat: () => ({ platform: "dingtalk", chatId: "nosuchuser" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
