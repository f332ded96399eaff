/** DingTalk's step of `herald setup`: the app's Client ID and Secret, checked by fetching an access token. */
import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  apiUrl,
  askKept,
  askOwner,
  callService,
  keepApiUrl,
  keepSecrets,
  secret,
  skipped,
  untilChecked,
} from "../../core/setup-steps.js";

const FALLBACK_URL = "https://api.dingtalk.com";

/** DingTalk hands out an access token for the Client ID and Secret. */
export async function checkDingtalk(
  apiUrl: string,
  clientId: string,
  clientSecret: string,
): Promise<{ expireInSec: number }> {
  const answer = await callService("DingTalk", `${apiUrl}/v1.0/oauth2/accessToken`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ appKey: clientId, appSecret: clientSecret }),
  });
  if (answer.status !== 200 || typeof answer.body["accessToken"] !== "string") {
    throw new CheckFailed(
      `DingTalk answered ${answer.status} to oauth2/accessToken: the Client ID or Client Secret is wrong. Copy both from the app's Credentials & Basic Info page (open-dev.dingtalk.com).`,
    );
  }
  return { expireInSec: Number(answer.body["expireIn"] ?? 7200) };
}

async function dingtalkStep(ctx: StepContext): Promise<void> {
  ctx.p.note(
    "DingTalk",
    "In open-dev.dingtalk.com create an app, add the Robot capability with message receiving in Stream mode,\nand publish it. Herald connects out to DingTalk: no public URL is needed.",
  );
  await untilChecked(ctx, {
    ask: async () => {
      const clientId = await askKept(ctx, "dingtalk.client_id", "Client ID (AppKey)");
      if (!clientId) return skipped(ctx, "DingTalk skipped: no Client ID.");
      const clientSecret = await secret(
        ctx,
        "dingtalk.client_secret",
        "DINGTALK_CLIENT_SECRET",
        "Client Secret (AppSecret)",
      );
      if (!clientSecret.value) return skipped(ctx, "DingTalk skipped: no Client Secret.");
      const url = await apiUrl(ctx, "dingtalk.api_url", "dingtalk.api_url", FALLBACK_URL);
      return { clientId, clientSecret, url };
    },
    label: "Checking the app (access token)",
    check: (a) => checkDingtalk(a.url, a.clientId, a.clientSecret.value!),
    describe: () => "DingTalk accepted the app",
    retry: "DingTalk settings",
    keep: (a) => {
      ctx.files.set("dingtalk.client_id", a.clientId);
      keepApiUrl(ctx, "dingtalk.api_url", a.url, FALLBACK_URL);
      keepSecrets(ctx, a.clientSecret);
      return askOwner(ctx, "dingtalk", "Your own DingTalk userid (empty skips)");
    },
  });
}

/** DingTalk in `herald setup`. */
export const dingtalkSetup: SetupQuestions = {
  label: "DingTalk",
  hint: "an app robot in Stream mode: Client ID + Secret",
  chosenBy: "dingtalk.client_id",
  flags: [
    {
      flag: "--dingtalk-client-id <id>",
      key: "dingtalk.client_id",
      env: "DINGTALK_CLIENT_ID",
      help: "env DINGTALK_CLIENT_ID: the app's Client ID",
    },
    {
      flag: "--dingtalk-client-secret <secret>",
      key: "dingtalk.client_secret",
      env: "DINGTALK_CLIENT_SECRET",
      help: "env DINGTALK_CLIENT_SECRET: the app's Client Secret",
    },
    {
      flag: "--dingtalk-api-url <url>",
      key: "dingtalk.api_url",
      env: "DINGTALK_API_URL",
      help: "env DINGTALK_API_URL",
    },
    { flag: "--dingtalk-owner <userid>", key: "dingtalk.owner", help: "your DingTalk userid" },
  ],
  step: dingtalkStep,
};
