/**
 * Slack as a platform module: its config section, env names, reference rows, setup step, the
 * doctor's token check and lazily built adapter.
 */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { doctorNames } from "../../core/settings.js";
import { credentialLine } from "../../core/setup-steps.js";
import { slackSchema } from "./section.js";
import { checkSlack, slackSetup } from "./setup.js";

/** The Slack platform. */
export const slackPlatform = definePlatform({
  name: "slack",
  schema: slackSchema,
  accountKeys: ["botToken", "appToken", "signingSecret"],
  env: {
    SLACK_BOT_TOKEN: ["bot_token", "string"],
    SLACK_APP_TOKEN: ["app_token", "string"],
    SLACK_SIGNING_SECRET: ["signing_secret", "string"],
    SLACK_API_URL: ["api_url", "url"],
    SLACK_STREAM: ["stream", "string"],
  },
  isConfigured: (c) => Boolean(c.botToken),
  validate(c) {
    if (c.botToken && !c.appToken && !c.signingSecret) {
      throw new ConfigError(
        "SLACK_SIGNING_SECRET",
        "SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP events) is. Fix: set one of them from your Slack app's settings.",
      );
    }
  },
  async create(c, deps) {
    const { createSlackAdapter } = await import("./index.js");
    return createSlackAdapter(
      {
        botToken: c.botToken ?? "",
        appToken: c.appToken,
        signingSecret: c.signingSecret,
        apiUrl: c.apiUrl,
        maxFileBytes: deps.mediaMaxBytes,
        stream: c.stream,
      },
      deps,
    );
  },
  reference: {
    rows: [
      ["bot_token", "`xoxb-…`; starts the platform"],
      ["app_token", "`xapp-…`: Socket Mode"],
      ["signing_secret", "HTTP events at `/webhooks/slack` (one of the two is required)"],
      ["api_url", "", "`https://slack.com/api/`"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: slackSetup,
  async doctor(c, context) {
    const { name, variable } = doctorNames("slack", context);
    return [
      await credentialLine(
        name,
        () => checkSlack(c.apiUrl, c.botToken!),
        (bot) => `bot ${bot.user} of workspace ${bot.team} answered auth.test`,
        "auth.test failed",
        `(the token: ${variable("BOT_TOKEN")}${context.account ? ", or bot_token in the account" : ""})`,
      ),
    ];
  },
  promptHint: "You are replying in Slack; Markdown is converted to Slack formatting. Avoid tables.",
});
