/** LINE's step of `herald setup`: the channel secret and access token, the token checked with /v2/bot/info. */
import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  apiUrl,
  askOwner,
  callService,
  keepApiUrl,
  keepSecrets,
  secret,
  skipped,
  untilChecked,
} from "../../core/setup-steps.js";

const FALLBACK_URL = "https://api.line.me";

/** LINE accepts the channel access token: `GET /v2/bot/info` answers with the bot. */
export async function checkLine(
  token: string,
  apiUrl = "https://api.line.me",
): Promise<{ displayName: string }> {
  const answer = await callService("LINE", `${apiUrl.replace(/\/+$/, "")}/v2/bot/info`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (answer.status === 401) {
    throw new CheckFailed(
      "LINE answered 401 to /v2/bot/info: the channel access token is wrong or revoked. Issue a long-lived one in the LINE Developers console → your channel → Messaging API.",
    );
  }
  if (answer.status !== 200 || typeof answer.body["displayName"] !== "string") {
    throw new CheckFailed(
      `LINE answered ${answer.status} to GET /v2/bot/info; check the channel access token.`,
    );
  }
  return { displayName: answer.body["displayName"] };
}

async function lineStep(ctx: StepContext): Promise<void> {
  ctx.p.note(
    "LINE",
    'Create a Messaging API channel in the LINE Developers console. Copy the channel secret (Basic settings) and issue a\nlong-lived channel access token (Messaging API). Set the webhook URL to https://<your host>/webhooks/line and turn on "Use webhook".',
  );
  await untilChecked(ctx, {
    ask: async () => {
      const channelSecret = await secret(
        ctx,
        "line.channel_secret",
        "LINE_CHANNEL_SECRET",
        "The channel secret",
      );
      if (!channelSecret.value) return skipped(ctx, "LINE skipped: no channel secret.");
      const token = await secret(
        ctx,
        "line.channel_access_token",
        "LINE_CHANNEL_ACCESS_TOKEN",
        "The channel access token",
      );
      if (!token.value) return skipped(ctx, "LINE skipped: no channel access token.");
      const url = await apiUrl(ctx, "line.api_url", "line.api_url", FALLBACK_URL);
      return { channelSecret, token, url };
    },
    label: "Checking the token (/v2/bot/info)",
    check: (a) => checkLine(a.token.value!, a.url),
    describe: (r) => `LINE bot ${r.displayName}`,
    retry: "LINE settings",
    keep: (a) => {
      keepApiUrl(ctx, "line.api_url", a.url, FALLBACK_URL);
      keepSecrets(ctx, a.channelSecret, a.token);
      return askOwner(ctx, "line", "Your own LINE user id (U followed by 32 hex digits; empty skips)");
    },
  });
}

/** LINE in `herald setup`. */
export const lineSetup: SetupQuestions = {
  label: "LINE",
  hint: "Messaging API channel secret + access token (webhook)",
  chosenBy: "line.channel_access_token",
  flags: [
    {
      flag: "--line-channel-secret <secret>",
      key: "line.channel_secret",
      env: "LINE_CHANNEL_SECRET",
      help: "env LINE_CHANNEL_SECRET: the channel secret",
    },
    {
      flag: "--line-channel-access-token <token>",
      key: "line.channel_access_token",
      env: "LINE_CHANNEL_ACCESS_TOKEN",
      help: "env LINE_CHANNEL_ACCESS_TOKEN: a long-lived channel access token",
    },
    { flag: "--line-api-url <url>", key: "line.api_url", env: "LINE_API_URL", help: "env LINE_API_URL" },
    { flag: "--line-owner <id>", key: "line.owner", help: "your LINE user id" },
  ],
  step: lineStep,
};
