/** SMS's step of `herald setup`: Twilio's account SID and auth token (checked live), the number, the webhook URL. */
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

const FALLBACK_URL = "https://api.twilio.com";

/** Twilio accepts the credentials: `GET /2010-04-01/Accounts/<sid>.json` answers with the account. */
export async function checkTwilio(
  accountSid: string,
  authToken: string,
  url = FALLBACK_URL,
): Promise<{ friendlyName: string }> {
  const auth = Buffer.from(`${accountSid}:${authToken}`).toString("base64");
  const answer = await callService(
    "Twilio",
    `${url.replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}.json`,
    {
      headers: { authorization: `Basic ${auth}` },
    },
  );
  if (answer.status === 401 || answer.status === 404) {
    throw new CheckFailed(
      `Twilio answered ${answer.status} for the account: the account SID or auth token is wrong. Copy both from the Twilio Console (Account Info).`,
    );
  }
  if (answer.status !== 200 || typeof answer.body["friendly_name"] !== "string") {
    throw new CheckFailed(`Twilio answered ${answer.status} to GET /2010-04-01/Accounts/<sid>.json.`);
  }
  return { friendlyName: answer.body["friendly_name"] };
}

async function smsStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  p.note(
    "SMS (Twilio)",
    'Herald sends and receives SMS through a Twilio number. Copy the account SID and auth token from the Twilio Console,\nand set the number\'s "A message comes in" webhook to https://<your host>/webhooks/sms (HTTP POST).',
  );
  await untilChecked(ctx, {
    ask: async () => {
      const sid = await askKept(ctx, "sms.account_sid", "Twilio account SID (AC…)");
      if (!sid) return skipped(ctx, "SMS skipped: no account SID.");
      const token = await secret(ctx, "sms.auth_token", "TWILIO_AUTH_TOKEN", "The auth token");
      if (!token.value) return skipped(ctx, "SMS skipped: no auth token.");
      const url = await apiUrl(ctx, "sms.api_url", "sms.api_url", FALLBACK_URL);
      return { sid, token, url };
    },
    label: "Checking the account (Accounts API)",
    check: (a) => checkTwilio(a.sid, a.token.value!, a.url),
    describe: (r) => `Twilio account ${r.friendlyName}`,
    retry: "Twilio settings",
    keep: async ({ sid, token, url }) => {
      const from = await p.text({
        key: "sms.from_number",
        message: "Your Twilio number, E.164 (+15551234567)",
      });
      if (!from) return p.say("warn", "SMS skipped: no Twilio number.");
      const webhook = await p.text({
        key: "sms.webhook_url",
        message: "The webhook URL as set in Twilio (https://…/webhooks/sms)",
      });
      if (!webhook) return p.say("warn", "SMS skipped: no webhook URL (signatures are checked against it).");
      keepApiUrl(ctx, "sms.api_url", url, FALLBACK_URL);
      files.set("sms.account_sid", sid);
      files.set("sms.from_number", from);
      files.set("sms.webhook_url", webhook);
      keepSecrets(ctx, token);
      return askOwner(ctx, "sms", "Your own mobile number, E.164 (empty skips)");
    },
  });
}

/** SMS in `herald setup`. */
export const smsSetup: SetupQuestions = {
  label: "SMS (Twilio)",
  hint: "account SID + auth token, a Twilio number, the webhook URL",
  chosenBy: "sms.account_sid",
  flags: [
    {
      flag: "--twilio-account-sid <sid>",
      key: "sms.account_sid",
      env: "TWILIO_ACCOUNT_SID",
      help: "env TWILIO_ACCOUNT_SID: the account SID",
    },
    {
      flag: "--twilio-auth-token <token>",
      key: "sms.auth_token",
      env: "TWILIO_AUTH_TOKEN",
      help: "env TWILIO_AUTH_TOKEN: the auth token",
    },
    {
      flag: "--twilio-from-number <number>",
      key: "sms.from_number",
      env: "TWILIO_FROM_NUMBER",
      help: "env TWILIO_FROM_NUMBER: the Twilio number",
    },
    {
      flag: "--twilio-webhook-url <url>",
      key: "sms.webhook_url",
      env: "TWILIO_WEBHOOK_URL",
      help: "env TWILIO_WEBHOOK_URL: the webhook's public URL",
    },
    { flag: "--twilio-api-url <url>", key: "sms.api_url", env: "TWILIO_API_URL", help: "env TWILIO_API_URL" },
    { flag: "--sms-owner <number>", key: "sms.owner", help: "your mobile number" },
  ],
  step: smsStep,
};
