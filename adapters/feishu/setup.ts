/** Feishu / Lark's step of `herald setup`: the app's credentials, checked by fetching a tenant token. */
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
import { FEISHU_DOMAINS } from "./section.js";

/** The app's credentials work: `tenant_access_token/internal` hands out a token, and the bot exists. */
export async function checkFeishu(
  apiUrl: string,
  appId: string,
  appSecret: string,
): Promise<{ name: string }> {
  const token = await callService("Feishu", `${apiUrl}/open-apis/auth/v3/tenant_access_token/internal`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ app_id: appId, app_secret: appSecret }),
  });
  if (token.body["code"] !== 0 || typeof token.body["tenant_access_token"] !== "string") {
    throw new CheckFailed(
      `Feishu refused the App ID / App Secret (code ${String(token.body["code"])}: ${String(token.body["msg"] ?? "")}). Copy both again from the Developer Console → Credentials & Basic Info, and check the domain (feishu or lark).`,
    );
  }
  const bot = await callService("Feishu", `${apiUrl}/open-apis/bot/v3/info`, {
    headers: { authorization: `Bearer ${token.body["tenant_access_token"]}` },
  });
  const info = bot.body["bot"] as { app_name?: string } | undefined;
  if (bot.body["code"] !== 0 || !info) {
    throw new CheckFailed(
      "The app has no bot: enable Features → Bot in the Developer Console, then publish a version.",
    );
  }
  return { name: info.app_name ?? appId };
}

async function feishuStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  p.note(
    "Feishu / Lark",
    "Create a custom app (open.feishu.cn/app or open.larksuite.com/app), enable Features → Bot, add the im:message\npermissions, and under Events & Callbacks set an Encrypt Key, the request URL https://<your host>/webhooks/feishu,\nand subscribe to im.message.receive_v1 and card.action.trigger.",
  );
  await untilChecked(ctx, {
    ask: async () => {
      const domain =
        (await p.text({
          key: "feishu.domain",
          message: "feishu (China) or lark (international)",
          initial: "feishu",
        })) ?? "feishu";
      const fallback = FEISHU_DOMAINS[domain === "lark" ? "lark" : "feishu"];
      const url = await apiUrl(ctx, "feishu.api_url", "feishu.api_url", fallback);
      const appId = await askKept(ctx, "feishu.app_id", "App ID (cli_…)");
      if (!appId) return skipped(ctx, "Feishu skipped: no App ID.");
      const appSecret = await secret(ctx, "feishu.app_secret", "FEISHU_APP_SECRET", "App Secret");
      const encryptKey = await secret(ctx, "feishu.encrypt_key", "FEISHU_ENCRYPT_KEY", "Encrypt Key");
      const token = await secret(
        ctx,
        "feishu.verification_token",
        "FEISHU_VERIFICATION_TOKEN",
        "Verification Token",
      );
      if (!appSecret.value || !encryptKey.value || !token.value) {
        return skipped(
          ctx,
          "Feishu skipped: the App Secret, Encrypt Key and Verification Token are all needed.",
        );
      }
      return { domain, fallback, url, appId, appSecret, encryptKey, token };
    },
    label: "Checking the app (tenant token, bot info)",
    check: (a) => checkFeishu(a.url, a.appId, a.appSecret.value!),
    describe: (r) => `Feishu bot ${r.name}`,
    retry: "Feishu settings",
    keep: (a) => {
      files.set("feishu.app_id", a.appId);
      if (a.domain === "lark") files.set("feishu.domain", "lark");
      keepApiUrl(ctx, "feishu.api_url", a.url, a.fallback);
      keepSecrets(ctx, a.appSecret, a.encryptKey, a.token);
      return askOwner(ctx, "feishu", "Your own open_id (ou_…; empty skips)");
    },
  });
}

/** Feishu / Lark in `herald setup`. */
export const feishuSetup: SetupQuestions = {
  label: "Feishu / Lark",
  hint: "a custom app's App ID + Secret, events by HTTP",
  chosenBy: "feishu.app_id",
  flags: [
    {
      flag: "--feishu-domain <feishu|lark>",
      key: "feishu.domain",
      env: "FEISHU_DOMAIN",
      help: "env FEISHU_DOMAIN: feishu or lark",
    },
    {
      flag: "--feishu-app-id <id>",
      key: "feishu.app_id",
      env: "FEISHU_APP_ID",
      help: "env FEISHU_APP_ID: the app's App ID",
    },
    {
      flag: "--feishu-app-secret <secret>",
      key: "feishu.app_secret",
      env: "FEISHU_APP_SECRET",
      help: "env FEISHU_APP_SECRET: the App Secret",
    },
    {
      flag: "--feishu-encrypt-key <key>",
      key: "feishu.encrypt_key",
      env: "FEISHU_ENCRYPT_KEY",
      help: "env FEISHU_ENCRYPT_KEY: the events' Encrypt Key",
    },
    {
      flag: "--feishu-verification-token <token>",
      key: "feishu.verification_token",
      env: "FEISHU_VERIFICATION_TOKEN",
      help: "env FEISHU_VERIFICATION_TOKEN: the events' Verification Token",
    },
    {
      flag: "--feishu-api-url <url>",
      key: "feishu.api_url",
      env: "FEISHU_API_URL",
      help: "env FEISHU_API_URL",
    },
    { flag: "--feishu-owner <open_id>", key: "feishu.owner", help: "your Feishu open_id" },
  ],
  step: feishuStep,
};
