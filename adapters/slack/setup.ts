/** Slack's step of `herald setup`: the bot and app tokens, checked with auth.test; the owner's member id. */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  addOwner,
  apiUrl,
  callService,
  checked,
  keepApiUrl,
  secret,
  tryAgain,
} from "../../core/setup-steps.js";

const FALLBACK_URL = "https://slack.com/api/";

/** Slack's auth.test with the bot token: the workspace and the bot's user. */
export async function checkSlack(apiUrl: string, botToken: string): Promise<{ team: string; user: string }> {
  const url = `${apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`}auth.test`;
  const answer = await callService("Slack", url, {
    method: "POST",
    headers: { authorization: `Bearer ${botToken}` },
  });
  if (answer.body["ok"] !== true) {
    throw new CheckFailed(
      `Slack's auth.test answered '${String(answer.body["error"] ?? answer.status)}': the bot token (xoxb-…) is wrong or revoked. Copy it from your app's OAuth & Permissions page.`,
    );
  }
  return { team: String(answer.body["team"] ?? "?"), user: String(answer.body["user"] ?? "?") };
}

async function slackStep(ctx: StepContext): Promise<void> {
  for (;;) {
    const bot = await secret(ctx, "slack.bot_token", "SLACK_BOT_TOKEN", "Bot token (xoxb-…)");
    if (!bot.value) return ctx.p.say("warn", "Slack skipped: no bot token.");
    const app = await secret(
      ctx,
      "slack.app_token",
      "SLACK_APP_TOKEN",
      "App-level token for Socket Mode (xapp-…)",
    );
    const url = await apiUrl(ctx, "slack.api_url", "slack.api_url", FALLBACK_URL);
    const who = await checked(
      ctx,
      "Checking the token (auth.test)",
      () => checkSlack(url, bot.value!),
      (r) => `Slack: ${r.user} in ${r.team}`,
    );
    if (!who) {
      if (await tryAgain(ctx, "Slack tokens")) continue;
      return;
    }
    if (bot.isNew) ctx.files.setEnv("SLACK_BOT_TOKEN", bot.value);
    if (app.isNew && app.value) ctx.files.setEnv("SLACK_APP_TOKEN", app.value);
    if (!app.value)
      ctx.p.say(
        "warn",
        "No app token: Slack then needs SLACK_SIGNING_SECRET and a public URL for /webhooks/slack.",
      );
    keepApiUrl(ctx, "slack.api_url", url, FALLBACK_URL);
    const owner = await ctx.p.text({
      key: "slack.owner",
      message: "Your Slack member id (profile → ⋮ → Copy member ID; empty skips)",
    });
    return addOwner(ctx, "slack", owner);
  }
}

/** Slack in `herald setup`. */
export const slackSetup: SetupQuestions = {
  label: "Slack",
  hint: "bot token + app-level token (Socket Mode)",
  chosenBy: "slack.bot_token",
  flags: [
    {
      flag: "--slack-bot-token <token>",
      key: "slack.bot_token",
      env: "SLACK_BOT_TOKEN",
      help: "env SLACK_BOT_TOKEN",
    },
    {
      flag: "--slack-app-token <token>",
      key: "slack.app_token",
      env: "SLACK_APP_TOKEN",
      help: "env SLACK_APP_TOKEN",
    },
    { flag: "--slack-api-url <url>", key: "slack.api_url", env: "SLACK_API_URL", help: "env SLACK_API_URL" },
    { flag: "--slack-owner <id>", key: "slack.owner", help: "your Slack member id" },
  ],
  step: slackStep,
};
