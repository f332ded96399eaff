/** SMS as a platform module: Twilio's Messages API through the `twilio` SDK, webhooks at `/webhooks/sms`. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { smsSchema } from "./section.js";
import { smsSetup } from "./setup.js";

const NEEDED = [
  ["accountSid", "TWILIO_ACCOUNT_SID", "the account SID from the Twilio Console"],
  ["authToken", "TWILIO_AUTH_TOKEN", "the auth token from the Twilio Console"],
  ["fromNumber", "TWILIO_FROM_NUMBER", "your Twilio number in E.164, like +15551234567"],
  ["webhookUrl", "TWILIO_WEBHOOK_URL", "the https URL Twilio posts to, ending in /webhooks/sms"],
] as const;

/** The SMS platform (Twilio). */
export const smsPlatform = definePlatform({
  name: "sms",
  schema: smsSchema,
  accountKeys: ["fromNumber", "webhookUrl"],
  env: {
    TWILIO_ACCOUNT_SID: ["account_sid", "string"],
    TWILIO_AUTH_TOKEN: ["auth_token", "string"],
    TWILIO_FROM_NUMBER: ["from_number", "string"],
    TWILIO_WEBHOOK_URL: ["webhook_url", "url"],
    TWILIO_API_URL: ["api_url", "url"],
    TWILIO_MAX_CHARS: ["max_chars", "int"],
    TWILIO_HELP_TEXT: ["help_text", "string"],
  },
  isConfigured: (c) => Boolean(c.accountSid && c.authToken),
  validate(c) {
    if (!c.accountSid && !c.authToken) return;
    for (const [key, env, what] of NEEDED) {
      if (!c[key])
        throw new ConfigError(env, `SMS needs ${env} once Twilio is configured. Fix: set it to ${what}.`);
    }
    if (!c.accountSid!.startsWith("AC")) {
      throw new ConfigError(
        "TWILIO_ACCOUNT_SID",
        "TWILIO_ACCOUNT_SID starts with AC. Fix: copy the account SID (not an API key SID) from the Twilio Console.",
      );
    }
  },
  async create(c, deps) {
    const { createSmsAdapter } = await import("./index.js");
    return createSmsAdapter(
      {
        accountSid: c.accountSid!,
        authToken: c.authToken!,
        fromNumber: c.fromNumber!,
        webhookUrl: c.webhookUrl!,
        apiUrl: c.apiUrl,
        maxChars: c.maxChars,
        helpText: c.helpText,
      },
      deps,
    );
  },
  // Phone numbers compare without the leading `+`.
  normaliseUserId: (id) => id.trim().replace(/^\+/, ""),
  reference: {
    rows: [
      ["account_sid", "the Twilio account SID (`AC…`); with the token, starts the platform"],
      ["auth_token", "the account's auth token (never logged)"],
      ["from_number", "the Twilio number replies come from, E.164"],
      [
        "webhook_url",
        "the webhook's public URL as set in Twilio; signatures are checked over it, MMS media is served under it",
      ],
      ["api_url", "Twilio's REST API"],
      ["max_chars", "characters per message sent (Twilio splits each into segments the phone joins)"],
      ["help_text", "the answer to HELP", "a short text naming STOP and START"],
    ],
  },
  setup: smsSetup,
  doctor: (c) => [{ ok: true, text: `sms: ${c.fromNumber ?? "?"}, webhook ${c.webhookUrl ?? "unset"}` }],
  promptHint:
    "You are replying by SMS: plain text only (no Markdown, no tables), as short as the answer allows; long replies cost several messages.",
});
