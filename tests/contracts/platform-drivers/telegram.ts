/**
 * The Telegram driver of the PlatformAdapter contract: the real adapter (grammY) against the fake Bot API,
 * which parses the HTML like Telegram and stores what each chat shows.
 */
import { TELEGRAM_MAX_CHARS } from "../../../adapters/telegram/format.js";
import { telegramRig } from "../../e2e/telegram-helpers.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";

const CHAT_ID = 111;

export const telegramDriver: PlatformDriver = {
  platform: "telegram",
  abilities: { edit: true, deleteMessage: true, sendTyping: true, status: true },
  maxChars: TELEGRAM_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 1000 },
    // 401 (and 404, a token Telegram does not know) name the token; see api-errors.ts.
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    // The per-chat budget (1 message/s, bursts of 3) is the adapter's own pacing, not the contract's.
    const rig = await telegramRig({ limits: { perChatBurst: 20, perChatPerSecond: 50 } });
    const find = (id: string) => rig.fake.messages(CHAT_ID).find((m) => String(m.message_id) === id);
    return {
      adapter: rig.adapter,
      chat: { platform: "telegram", chatId: String(CHAT_ID) },
      delivered: () =>
        rig.fake.botMessages(CHAT_ID).map((m) => ({ id: String(m.message_id), text: m.text ?? "" })),
      currentText: (id) => find(id)?.text,
      isDeleted: (id) => find(id)?.deleted === true,
      rateLimitNextSend: () => rig.fake.fault("sendMessage", { status: 429, retryAfter: 1 }),
      refuseAuthOnNextSend: () => rig.fake.fault("sendMessage", { status: 401 }),
      // A channel username nobody registered: the fake answers "Bad Request: chat not found" like Telegram.
      unknownChat: () => ({ platform: "telegram", chatId: "@no_such_channel_4711" }),
      close: () => rig.close(),
    };
  },
};
