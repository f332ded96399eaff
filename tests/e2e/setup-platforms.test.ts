/**
 * `herald setup --non-interactive` for the platforms besides Telegram and Discord: Slack (auth.test on
 * the fake Slack), Matrix (whoami on the fake homeserver) and email (a login on a real Dovecot and an
 * SMTP verify on a real SMTP server), each with a right and a wrong credential; WhatsApp (enabled, with
 * how to link it).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FakeHomeserver, startFakeHomeserver } from "../fakes/matrix/index.js";
import { type FakeSlack, startFakeSlack } from "../fakes/slack/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";
import { AUTHSERV_ID, type EmailEnv, PASSWORD, startEmailEnv } from "./email-env.js";

let slack: FakeSlack;
let matrix: FakeHomeserver;
let email: EmailEnv;
beforeAll(async () => {
  [slack, matrix, email] = await Promise.all([startFakeSlack(), startFakeHomeserver(), startEmailEnv()]);
});
afterAll(async () => {
  await Promise.all([slack?.close(), matrix?.close(), email?.close()]);
});

const setup = nonInteractiveSetup("p");

const mailArgs = (password: string) => {
  const bot = email.nextBot();
  const c = email.config(bot);
  return [
    "--email-address",
    c.address,
    "--email-password",
    password,
    "--imap-host",
    c.imapHost,
    "--imap-port",
    String(c.imapPort),
    "--smtp-host",
    c.smtpHost,
    "--smtp-port",
    String(c.smtpPort),
    "--email-tls",
    "false",
    "--email-owner",
    "alice@example.test",
    "--email-authserv-id",
    AUTHSERV_ID,
  ];
};

describe("herald setup for Slack, Matrix, email and WhatsApp", () => {
  it("checks each live and writes their settings", async () => {
    const run = await setup([
      "--slack-bot-token",
      slack.botToken,
      "--slack-app-token",
      slack.appToken,
      "--slack-api-url",
      slack.apiUrl,
      "--slack-owner",
      "U0OWNER1",
      "--matrix-homeserver",
      matrix.url,
      "--matrix-token",
      matrix.botAccessToken,
      "--matrix-owner",
      "@me:localhost",
      ...mailArgs(PASSWORD),
      "--whatsapp",
      "--whatsapp-owner",
      "+1 555 123 4567",
    ]);
    expect(run.out).toContain("herald whatsapp link");
    expect(run.out).toMatch(/Slack: \S+ in \S+/);
    expect(run.out).toContain(`Matrix: ${matrix.botUserId}`);
    expect(run.out).toContain("IMAP login and SMTP verify passed");
    expect(run.code).toBe(0);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["slack"]).toMatchObject({ api_url: slack.apiUrl, allowed_users: ["U0OWNER1"] });
    expect(config["matrix"]).toMatchObject({ homeserver: matrix.url, allowed_users: ["@me:localhost"] });
    expect(config["whatsapp"]).toMatchObject({ enabled: true, allowed_users: ["15551234567"] });
    expect(config["email"]).toMatchObject({
      imap_host: "127.0.0.1",
      tls: false,
      allowed_users: ["alice@example.test"],
      trusted_authserv_id: AUTHSERV_ID,
    });
    const env = readFileSync(join(run.home, ".env"), "utf8");
    for (const name of ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "MATRIX_ACCESS_TOKEN", "EMAIL_PASSWORD"])
      expect(env).toContain(`${name}=`);
  });

  it("refuses a wrong Slack token, Matrix token or mail password, and writes nothing", async () => {
    const badSlack = await setup(["--slack-bot-token", "xoxb-wrong", "--slack-api-url", slack.apiUrl]);
    expect(badSlack.code).toBe(1);
    expect(badSlack.out).toMatch(/Slack's auth.test answered 'invalid_auth'/);
    expect(existsSync(join(badSlack.home, ".env"))).toBe(false);

    const badMatrix = await setup(["--matrix-homeserver", matrix.url, "--matrix-token", "syt_wrong"]);
    expect(badMatrix.code).toBe(1);
    expect(badMatrix.out).toMatch(/homeserver answered 401 to whoami/);

    const badMail = await setup(mailArgs("not-the-password"));
    expect(badMail.code).toBe(1);
    expect(badMail.out).toMatch(/IMAP login to 127.0.0.1 was refused/);
    expect(badMail.out).not.toContain("not-the-password");
    expect(existsSync(join(badMail.home, "config.yaml"))).toBe(false);
  });
});
