/** DingTalk's step of `herald setup`: the app's Client ID and Secret, checked by fetching an access token. */
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
  const { p, files } = ctx;
  p.note(
    "DingTalk",
    "In open-dev.dingtalk.com create an app, add the Robot capability with message receiving in Stream mode,\nand publish it. Herald connects out to DingTalk: no public URL is needed.",
  );
  for (;;) {
    const clientId = await p.text({
      key: "dingtalk.client_id",
      message: "Client ID (AppKey)",
      initial: files.get("dingtalk.client_id") as string | undefined,
    });
    if (!clientId) return p.say("warn", "DingTalk skipped: no Client ID.");
    const clientSecret = await secret(
      ctx,
      "dingtalk.client_secret",
      "DINGTALK_CLIENT_SECRET",
      "Client Secret (AppSecret)",
    );
    if (!clientSecret.value) return p.say("warn", "DingTalk skipped: no Client Secret.");
    const url = await apiUrl(ctx, "dingtalk.api_url", "dingtalk.api_url", FALLBACK_URL);
    const ok = await checked(
      ctx,
      "Checking the app (access token)",
      () => checkDingtalk(url, clientId, clientSecret.value!),
      () => "DingTalk accepted the app",
    );
    if (!ok) {
      if (await tryAgain(ctx, "DingTalk settings")) continue;
      return;
    }
    files.set("dingtalk.client_id", clientId);
    keepApiUrl(ctx, "dingtalk.api_url", url, FALLBACK_URL);
    if (clientSecret.isNew) files.setEnv("DINGTALK_CLIENT_SECRET", clientSecret.value);
    const owner = await p.text({ key: "dingtalk.owner", message: "Your own DingTalk userid (empty skips)" });
    return addOwner(ctx, "dingtalk", owner);
  }
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
