/** Discord's step of `herald setup`: the bot token, checked with /users/@me; the owner's user id. */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  addOwner,
  apiUrl,
  callService,
  checked,
  keepApiUrl,
  secret,
  trimUrl,
  tryAgain,
} from "../../core/setup-steps.js";

const FALLBACK_URL = "https://discord.com/api";

/** Discord's GET /users/@me with the bot token: the bot's name. */
export async function checkDiscord(apiUrl: string, token: string): Promise<{ username: string; id: string }> {
  const answer = await callService("Discord", `${trimUrl(apiUrl)}/v10/users/@me`, {
    headers: { authorization: `Bot ${token}` },
  });
  if (answer.status === 401) {
    throw new CheckFailed(
      "Discord answered 401 to /users/@me: the bot token is wrong or was reset. Copy it again (Developer Portal → Bot → Reset Token).",
    );
  }
  if (answer.status !== 200) throw new CheckFailed(`Discord answered ${answer.status} to /users/@me.`);
  return { username: String(answer.body["username"] ?? "?"), id: String(answer.body["id"] ?? "") };
}

async function discordStep(ctx: StepContext): Promise<void> {
  for (;;) {
    const token = await secret(
      ctx,
      "discord.token",
      "DISCORD_BOT_TOKEN",
      "Bot token (Developer Portal → Bot)",
    );
    if (!token.value) return ctx.p.say("warn", "Discord skipped: no token.");
    const url = await apiUrl(ctx, "discord.api_url", "discord.api_url", FALLBACK_URL);
    const bot = await checked(
      ctx,
      "Checking the token (/users/@me)",
      () => checkDiscord(url, token.value!),
      (b) => `Discord bot ${b.username}`,
    );
    if (!bot) {
      if (await tryAgain(ctx, "Discord token")) continue;
      return;
    }
    if (token.isNew) ctx.files.setEnv("DISCORD_BOT_TOKEN", token.value);
    keepApiUrl(ctx, "discord.api_url", url, FALLBACK_URL);
    ctx.p.note(
      "Discord",
      "Enable the Message Content intent (Developer Portal → Bot → Privileged Gateway Intents) and invite the bot with the bot + applications.commands scopes.",
    );
    const owner = await ctx.p.text({
      key: "discord.owner",
      message:
        "Your Discord user id (Settings → Advanced → Developer Mode, then right-click yourself → Copy User ID; empty skips)",
    });
    return addOwner(ctx, "discord", owner);
  }
}

/** Discord in `herald setup`. */
export const discordSetup: SetupQuestions = {
  label: "Discord",
  hint: "a bot token from the Developer Portal",
  chosenBy: "discord.token",
  flags: [
    {
      flag: "--discord-token <token>",
      key: "discord.token",
      env: "DISCORD_BOT_TOKEN",
      help: "env DISCORD_BOT_TOKEN",
    },
    {
      flag: "--discord-api-url <url>",
      key: "discord.api_url",
      env: "DISCORD_API_URL",
      help: "env DISCORD_API_URL",
    },
    { flag: "--discord-owner <id>", key: "discord.owner", help: "your Discord user id" },
  ],
  step: discordStep,
};
