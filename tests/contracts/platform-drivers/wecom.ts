/**
 * The WeCom driver of the PlatformAdapter contract: the real adapter (fetch, no SDK) against the fake
 * WeCom server API, which records the messages the app sent. WeCom cannot edit and has no typing.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { utf8Length, WECOM_MAX_BYTES } from "../../../adapters/wecom/format.js";
import { createWecomAdapter } from "../../../adapters/wecom/index.js";
import { silentLogger } from "../../../core/logger.js";
import { AES_KEY, AGENT_ID, CORP_ID, SECRET, startFakeWecom, TOKEN } from "../../fakes/wecom/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const USER = "ZhangSan";

export const wecomDriver: PlatformDriver = {
  platform: "wecom",
  abilities: { edit: false, deleteMessage: false, sendTyping: false, status: true },
  maxChars: WECOM_MAX_BYTES,
  length: utf8Length,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: undefined },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeWecom();
    fake.addUser(USER);
    const adapter = createWecomAdapter(
      {
        corpId: CORP_ID,
        agentId: AGENT_ID,
        secret: SECRET,
        token: TOKEN,
        encodingAesKey: AES_KEY,
        apiUrl: fake.url,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-wecom-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "wecom", chatId: USER },
      delivered: () =>
        fake.sent
          .filter((s) => s.to === USER)
          .map((s) => ({ id: s.msgid, text: String((s.body[s.msgtype] as { content: string }).content) })),
      rateLimitNextSend: () =>
        fake.fault("message/send", { errcode: 45033, errmsg: "api concurrent out of limit" }),
      refuseAuthOnNextSend: () => fake.revokeSecret(),
      unknownChat: () => ({ platform: "wecom", chatId: "NoSuchUser" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
