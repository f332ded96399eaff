/** WeCom's step of `herald setup`: the Corp ID and app Secret, checked with `gettoken`. */
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

const FALLBACK_URL = "https://qyapi.weixin.qq.com";

/** WeCom hands out an access token for the Corp ID and Secret. */
export async function checkWecom(
  apiUrl: string,
  corpId: string,
  appSecret: string,
): Promise<{ expiresInSec: number }> {
  const answer = await callService(
    "WeCom",
    `${apiUrl}/cgi-bin/gettoken?corpid=${encodeURIComponent(corpId)}&corpsecret=${encodeURIComponent(appSecret)}`,
  );
  if (answer.body["errcode"] !== 0 || typeof answer.body["access_token"] !== "string") {
    throw new CheckFailed(
      `WeCom refused the Corp ID / Secret (gettoken errcode ${String(answer.body["errcode"])}). Copy the Corp ID from My Company → Company Info and the Secret from App Management → your app.`,
    );
  }
  return { expiresInSec: Number(answer.body["expires_in"] ?? 7200) };
}

async function wecomStep(ctx: StepContext): Promise<void> {
  ctx.p.note(
    "WeCom",
    "In the WeCom admin console: App Management → Create App (note its AgentId and Secret); in the app's\nReceive Messages → Set API Receive, set the URL https://<your host>/webhooks/wecom, a Token and an EncodingAESKey.",
  );
  await untilChecked(ctx, {
    ask: async () => {
      const corpId = await askKept(ctx, "wecom.corp_id", "Corp ID (ww…)");
      if (!corpId) return skipped(ctx, "WeCom skipped: no Corp ID.");
      const agentId = await ctx.p.text({ key: "wecom.agent_id", message: "The app's AgentId" });
      const appSecret = await secret(ctx, "wecom.secret", "WECOM_SECRET", "The app's Secret");
      const token = await secret(ctx, "wecom.token", "WECOM_TOKEN", "Callback Token");
      const aesKey = await secret(
        ctx,
        "wecom.encoding_aes_key",
        "WECOM_ENCODING_AES_KEY",
        "Callback EncodingAESKey (43 characters)",
      );
      const url = await apiUrl(ctx, "wecom.api_url", "wecom.api_url", FALLBACK_URL);
      if (!agentId || !appSecret.value || !token.value || !aesKey.value) {
        return skipped(ctx, "WeCom skipped: the AgentId, Secret, Token and EncodingAESKey are all needed.");
      }
      return { corpId, agentId, appSecret, token, aesKey, url };
    },
    label: "Checking the Secret (gettoken)",
    check: (a) => checkWecom(a.url, a.corpId, a.appSecret.value!),
    describe: () => "WeCom accepted the Secret",
    retry: "WeCom settings",
    keep: (a) => {
      ctx.files.set("wecom.corp_id", a.corpId);
      ctx.files.set("wecom.agent_id", Number(a.agentId));
      keepApiUrl(ctx, "wecom.api_url", a.url, FALLBACK_URL);
      keepSecrets(ctx, a.appSecret, a.token, a.aesKey);
      return askOwner(ctx, "wecom", "Your own WeCom userid (empty skips)");
    },
  });
}

/** WeCom in `herald setup`. */
export const wecomSetup: SetupQuestions = {
  label: "WeCom",
  hint: "a self-built app: Corp ID, AgentId, Secret, callback Token + EncodingAESKey",
  chosenBy: "wecom.corp_id",
  flags: [
    {
      flag: "--wecom-corp-id <id>",
      key: "wecom.corp_id",
      env: "WECOM_CORP_ID",
      help: "env WECOM_CORP_ID: the Corp ID",
    },
    {
      flag: "--wecom-agent-id <id>",
      key: "wecom.agent_id",
      env: "WECOM_AGENT_ID",
      help: "env WECOM_AGENT_ID: the app's AgentId",
    },
    {
      flag: "--wecom-secret <secret>",
      key: "wecom.secret",
      env: "WECOM_SECRET",
      help: "env WECOM_SECRET: the app's Secret",
    },
    {
      flag: "--wecom-token <token>",
      key: "wecom.token",
      env: "WECOM_TOKEN",
      help: "env WECOM_TOKEN: the callback Token",
    },
    {
      flag: "--wecom-encoding-aes-key <key>",
      key: "wecom.encoding_aes_key",
      env: "WECOM_ENCODING_AES_KEY",
      help: "env WECOM_ENCODING_AES_KEY: the callback EncodingAESKey",
    },
    { flag: "--wecom-api-url <url>", key: "wecom.api_url", env: "WECOM_API_URL", help: "env WECOM_API_URL" },
    { flag: "--wecom-owner <userid>", key: "wecom.owner", help: "your WeCom userid" },
  ],
  step: wecomStep,
};
