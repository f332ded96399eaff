/**
 * The Discord driver of the PlatformAdapter contract: the real adapter (discord.js) against the fake
 * Discord (REST + gateway), which enforces the 2,000-character limit and keeps each message's content.
 */
import { DISCORD_MAX_CHARS } from "../../../adapters/discord/types.js";
import { IDS, startDiscordEnv } from "../../e2e/discord-env.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";

export const discordDriver: PlatformDriver = {
  platform: "discord",
  abilities: { edit: true, deleteMessage: true, sendTyping: true, status: true },
  maxChars: DISCORD_MAX_CHARS,
  // Discord counts characters (code points), not UTF-16 units.
  length: (text) => [...text].length,
  errors: {
    // A wait longer than maxRateLimitWaitMs (5 s) comes back to the outbox instead of being slept.
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 60_000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const env = await startDiscordEnv({ noStart: true, adapter: { editIntervalMs: 50 } });
    const chatId = IDS.aliceDm;
    const posted = (id: string) => env.fake.posted.find((p) => p.id === id);
    const messages = /\/messages$/;
    return {
      adapter: env.adapter,
      chat: { platform: "discord", chatId },
      delivered: () => env.fake.botMessages(chatId).map((p) => ({ id: p.id, text: p.content })),
      currentText: (id) => posted(id)?.currentContent,
      isDeleted: (id) => posted(id)?.deleted === true,
      rateLimitNextSend: () =>
        env.fake.fail({ method: "POST", path: messages, status: 429, retryAfterMs: 60_000 }),
      refuseAuthOnNextSend: () => env.fake.fail({ method: "POST", path: messages, status: 401 }),
      // Neither a channel nor a user: Unknown Channel, then the adapter's DM attempt gets Invalid Recipient.
      unknownChat: () => ({ platform: "discord", chatId: "1999999999999999999" }),
      close: () => env.stop(),
    };
  },
};
