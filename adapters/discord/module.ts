/** Discord as a platform module: its config section, env names and lazily built adapter. */
import { definePlatform } from "../../core/platform.js";
import { discordSchema } from "./section.js";

/** The Discord platform. */
export const discordPlatform = definePlatform({
  name: "discord",
  schema: discordSchema,
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
  promptHint:
    "You are replying in Discord; Markdown is rendered. Long replies are split into several messages.",
});
