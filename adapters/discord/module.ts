/**
 * Discord as a platform module: its config section, env names, reference rows, setup step, the
 * doctor's token check and lazily built adapter.
 */
import { definePlatform } from "../../core/platform.js";
import { doctorNames } from "../../core/settings.js";
import { credentialLine } from "../../core/setup-steps.js";
import { discordSchema } from "./section.js";
import { checkDiscord, discordSetup } from "./setup.js";

/** The Discord platform. */
export const discordPlatform = definePlatform({
  name: "discord",
  schema: discordSchema,
  accountKeys: ["botToken"],
  env: {
    DISCORD_BOT_TOKEN: ["bot_token", "string"],
    DISCORD_API_URL: ["api_url", "url"],
    DISCORD_STREAM: ["stream", "string"],
    DISCORD_AUTO_THREAD: ["auto_thread", "bool"],
    DISCORD_ALLOW_BOTS: ["allow_bots", "bool"],
  },
  isConfigured: (c) => Boolean(c.botToken),
  async create(c, deps) {
    const { createDiscordAdapter } = await import("./index.js");
    return createDiscordAdapter(
      {
        botToken: c.botToken,
        apiUrl: c.apiUrl,
        autoThread: c.autoThread,
        allowBots: c.allowBots,
        stream: c.stream,
        mediaMaxBytes: deps.mediaMaxBytes,
      },
      deps,
    );
  },
  reference: {
    rows: [
      ["bot_token", "starts the platform"],
      ["api_url", "REST base, as discord.js takes it", "`https://discord.com/api`"],
      ["auto_thread", "open a thread per conversation started by a mention in a channel"],
      ["allow_bots", "pass on messages of other bots and webhooks"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: discordSetup,
  async doctor(c, context) {
    const { name, variable } = doctorNames("discord", context);
    return [
      await credentialLine(
        name,
        () => checkDiscord(c.apiUrl, c.botToken!),
        (bot) => `bot ${bot.username} answered /users/@me`,
        "/users/@me failed",
        `(the token: ${variable("BOT_TOKEN")}${context.account ? ", or bot_token in the account" : ""})`,
      ),
    ];
  },
  promptHint:
    "You are replying in Discord; Markdown is rendered. Long replies are split into several messages.",
});
