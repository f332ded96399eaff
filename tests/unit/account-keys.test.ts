import { describe, expect, it } from "vitest";
import { configuredAccounts } from "../../app/config.js";
import { accountEnvName } from "../../app/config-accounts.js";
import { configHome } from "../helpers/config-home.js";

const { load, configError } = configHome("herald-account-keys-");

const telegramWebhook = {
  TELEGRAM_BOT_TOKEN: "1:work",
  TELEGRAM_WEBHOOK_URL: "https://h.example/webhooks/telegram",
  TELEGRAM_WEBHOOK_SECRET: "work-secret",
  TELEGRAM_API_ROOT: "http://127.0.0.1:9/",
};

describe("what an account inherits", () => {
  it("takes the section's settings but never its token, webhook URL or webhook secret", () => {
    const config = load("telegram:\n  allowed_users: ['111']\n  accounts:\n    - name: family\n", {
      ...telegramWebhook,
      TELEGRAM_FAMILY_BOT_TOKEN: "2:family",
    });
    const [account] = configuredAccounts(config);
    expect(account?.section).toMatchObject({
      botToken: "2:family",
      allowedUsers: ["111"],
      apiRoot: "http://127.0.0.1:9/",
    });
    // Without its own webhook_url the account polls; the section's webhook is the default bot's alone.
    expect(account?.section).not.toHaveProperty("webhookUrl");
    expect(account?.section).not.toHaveProperty("webhookSecret");
  });

  it("refuses an account given the section's own token or webhook URL, naming the account's key", () => {
    const token = configError("telegram:\n  accounts:\n    - { name: family, bot_token: '1:work' }\n", {
      TELEGRAM_BOT_TOKEN: "1:work",
    });
    expect(token.key).toBe("telegram.accounts.0.bot_token");
    expect(token.message).toMatch(/same bot_token as the telegram section.*Fix: give the account its own/);
    const url = configError("telegram:\n  accounts:\n    - name: family\n", {
      ...telegramWebhook,
      TELEGRAM_FAMILY_BOT_TOKEN: "2:family",
      TELEGRAM_FAMILY_WEBHOOK_URL: telegramWebhook.TELEGRAM_WEBHOOK_URL,
    });
    expect(url.key).toBe("telegram.accounts.0.webhook_url");
  });

  it("never hands the section's passwords to an account, which may name another server", () => {
    const irc = {
      IRC_SERVER: "irc.oftc.example",
      IRC_PASSWORD: "server-pass",
      IRC_SASL_ACCOUNT: "herald",
      IRC_SASL_PASSWORD: "sasl-pass",
    };
    // An IRC account on another network: the section's server password and SASL login stay behind.
    const [elsewhere] = configuredAccounts(
      load(
        "irc:\n  channels: ['#a']\n  accounts:\n    - { name: libera, server: irc.libera.example }\n",
        irc,
      ),
    );
    expect(elsewhere?.section).toMatchObject({ server: "irc.libera.example", channels: ["#a"] });
    expect(elsewhere?.section).not.toHaveProperty("password");
    expect(elsewhere?.section).not.toHaveProperty("saslAccount");
    expect(elsewhere?.section).not.toHaveProperty("saslPassword");
    // Its own, even the same value, are used.
    const [own] = configuredAccounts(
      load("irc:\n  accounts:\n    - { name: second }\n", { ...irc, IRC_SECOND_PASSWORD: "server-pass" }),
    );
    expect(own?.section).toMatchObject({ server: "irc.oftc.example", password: "server-pass" });
    // A mailbox's password is not another mailbox's: the account must set its own, and is told so.
    const mail = configError("email:\n  accounts:\n    - { name: sales, address: sales@example.org }\n", {
      EMAIL_ADDRESS: "bot@example.org",
      EMAIL_PASSWORD: "mailbox-pass",
      EMAIL_IMAP_HOST: "imap.example.org",
      EMAIL_SMTP_HOST: "smtp.example.org",
    });
    expect(mail.message).toMatch(/account 'sales' of email: .*Fix: set EMAIL_SALES_PASSWORD/);
  });

  it("says an account without its own token inherits none of the platform's account keys", () => {
    const err = configError("line:\n  accounts:\n    - name: shop\n", {
      LINE_CHANNEL_SECRET: "s",
      LINE_CHANNEL_ACCESS_TOKEN: "t",
    });
    expect(err.message).toMatch(/account 'shop' of line lacks/);
    expect(err.message).toContain("inherits none of channel_secret, channel_access_token");
    expect(err.message).toContain("LINE_SHOP_<VARIABLE>");
  });
});

describe("an account's variables", () => {
  it("follow the platform's own prefix where it differs from the platform's name", () => {
    expect(accountEnvName("TELEGRAM_BOT_TOKEN", "bot_token", "telegram", "family")).toBe(
      "TELEGRAM_FAMILY_BOT_TOKEN",
    );
    expect(accountEnvName("TWILIO_AUTH_TOKEN", "auth_token", "sms", "shop")).toBe("TWILIO_SHOP_AUTH_TOKEN");
    expect(accountEnvName("GOOGLE_CHAT_AUDIENCE", "audience", "googlechat", "my-team")).toBe(
      "GOOGLE_CHAT_MY_TEAM_AUDIENCE",
    );
  });

  it("reads a second Twilio number sharing the Twilio account, and names its own variable when one is missing", () => {
    const twilio = {
      TWILIO_ACCOUNT_SID: "AC0001",
      TWILIO_AUTH_TOKEN: "auth",
      TWILIO_FROM_NUMBER: "+15550000001",
      TWILIO_WEBHOOK_URL: "https://h.example/webhooks/sms",
    };
    const config = load("sms:\n  accounts:\n    - name: shop\n", {
      ...twilio,
      TWILIO_SHOP_FROM_NUMBER: "+15550000002",
      TWILIO_SHOP_WEBHOOK_URL: "https://h.example/webhooks/sms@shop",
    });
    expect(config.platforms["sms@shop"]).toMatchObject({
      accountSid: "AC0001",
      authToken: "auth",
      fromNumber: "+15550000002",
      webhookUrl: "https://h.example/webhooks/sms@shop",
    });
    const missing = configError("sms:\n  accounts:\n    - name: shop\n", {
      ...twilio,
      TWILIO_SHOP_FROM_NUMBER: "+15550000002",
    });
    expect(missing.key).toBe("TWILIO_SHOP_WEBHOOK_URL");
    expect(missing.message).toMatch(/account 'shop' of sms: SMS needs TWILIO_SHOP_WEBHOOK_URL/);
  });
});

describe("platforms with one account", () => {
  it("refuse accounts for WhatsApp and the web chat, naming the key and the fix", () => {
    const whatsapp = configError("whatsapp:\n  enabled: true\n  accounts:\n    - name: second\n");
    expect(whatsapp.key).toBe("whatsapp.accounts");
    expect(whatsapp.message).toMatch(/whatsapp.accounts is not supported: .*HERALD_HOME\/whatsapp/);
    expect(whatsapp.message).toContain("Fix: remove whatsapp.accounts.");
    const webchat = configError("webchat:\n  enabled: true\n  accounts:\n    - name: other\n");
    expect(webchat.key).toBe("webchat.accounts");
    expect(webchat.message).toMatch(/Fix: remove webchat.accounts/);
  });
});
