/**
 * Telegram as a platform module: its config section, env names, reference rows, setup step, the
 * doctor's token check (getMe) and lazily built adapter.
 */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { doctorNames } from "../../core/settings.js";
import { credentialLine } from "../../core/setup-steps.js";
import { telegramSchema } from "./section.js";
import { checkTelegram, telegramSetup } from "./setup.js";

/** The Telegram platform. */
export const telegramPlatform = definePlatform({
  name: "telegram",
  schema: telegramSchema,
  accountKeys: ["botToken", "webhookUrl", "webhookSecret"],
  env: {
    TELEGRAM_BOT_TOKEN: ["bot_token", "string"],
    TELEGRAM_API_ROOT: ["api_root", "url"],
    TELEGRAM_WEBHOOK_URL: ["webhook_url", "url"],
    TELEGRAM_WEBHOOK_SECRET: ["webhook_secret", "string"],
    TELEGRAM_STREAM: ["stream", "string"],
  },
  isConfigured: (c) => Boolean(c.botToken),
  validate(c) {
    if (c.webhookSecret && !/^[A-Za-z0-9_-]{1,256}$/.test(c.webhookSecret)) {
      throw new ConfigError(
        "TELEGRAM_WEBHOOK_SECRET",
        "TELEGRAM_WEBHOOK_SECRET may only contain A-Z, a-z, 0-9, _ and - (1 to 256 characters). Fix: choose another secret.",
      );
    }
  },
  async create(c, deps) {
    const { createTelegramAdapter, telegramConfigFrom } = await import("./index.js");
    return createTelegramAdapter(telegramConfigFrom(c, deps), deps);
  },
  reference: {
    rows: [
      ["bot_token", "starts the platform"],
      ["api_root", "a local Bot API server", "`https://api.telegram.org`"],
      ["webhook_url", "`https://<host>/webhooks/telegram`", "none (long polling)"],
      ["webhook_secret", "`A-Z a-z 0-9 _ -`, 1-256 characters", "derived from the token"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: telegramSetup,
  async doctor(c, context) {
    const { name, variable } = doctorNames("telegram", context);
    const mode = c.webhookUrl ? `webhook ${c.webhookUrl}` : "long polling";
    return [
      await credentialLine(
        name,
        () => checkTelegram(c.apiRoot, c.botToken!),
        (bot) => `bot @${bot.username} answered getMe (${mode})`,
        "getMe failed",
        `(the token: ${variable("BOT_TOKEN")}${context.account ? ", or bot_token in the account" : ""})`,
      ),
    ];
  },
  promptHint:
    "You are replying in Telegram; Markdown is rendered (bold, italic, code, links). Keep replies short.",
});
