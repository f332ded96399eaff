/**
 * `herald setup --non-interactive` for LINE, SMS (Twilio) and iMessage (BlueBubbles): each credential
 * checked live against its fake server, what passed written (ids and addresses to config.yaml, secrets
 * to .env), and a refused credential writing nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FakeBlueBubbles, SERVER_PASSWORD, startFakeBlueBubbles } from "../fakes/bluebubbles/index.js";
import { CHANNEL_SECRET, CHANNEL_TOKEN, type FakeLine, lineId, startFakeLine } from "../fakes/line/index.js";
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  type FakeTwilio,
  FROM_NUMBER,
  PUBLIC_WEBHOOK,
  startFakeTwilio,
} from "../fakes/twilio/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let line: FakeLine;
let twilio: FakeTwilio;
let bb: FakeBlueBubbles;
beforeAll(async () => {
  [line, twilio, bb] = await Promise.all([startFakeLine(), startFakeTwilio(), startFakeBlueBubbles()]);
});
afterAll(async () => {
  await Promise.all([line?.close(), twilio?.close(), bb?.close()]);
});

const setup = nonInteractiveSetup("lsb");
type Config = Record<string, Record<string, unknown>>;
const configOf = (home: string) => parseYaml(readFileSync(join(home, "config.yaml"), "utf8")) as Config;

describe("herald setup for LINE", () => {
  it("checks the token live and writes the secrets to .env and the owner to config.yaml", async () => {
    const owner = lineId("U", "ann");
    const run = await setup([
      "--line-channel-secret",
      CHANNEL_SECRET,
      "--line-channel-access-token",
      CHANNEL_TOKEN,
      "--line-api-url",
      line.url,
      "--line-owner",
      owner,
    ]);
    expect(run.out).toContain("LINE bot Herald");
    expect(run.out).not.toContain(CHANNEL_TOKEN);
    expect(run.code).toBe(0);
    expect(configOf(run.home)["line"]).toMatchObject({ allowed_users: [owner], api_url: line.url });
    const env = readFileSync(join(run.home, ".env"), "utf8");
    expect(env).toContain(`LINE_CHANNEL_ACCESS_TOKEN=${CHANNEL_TOKEN}`);
    expect(env).toContain(`LINE_CHANNEL_SECRET=${CHANNEL_SECRET}`);
  });

  it("refuses a wrong token with the fix, and writes nothing", async () => {
    const run = await setup([
      "--line-channel-secret",
      CHANNEL_SECRET,
      "--line-channel-access-token",
      "not-the-token",
      "--line-api-url",
      line.url,
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(
      /LINE answered 401 to \/v2\/bot\/info: the channel access token is wrong or revoked/,
    );
    expect(run.out).not.toContain("not-the-token");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});

describe("herald setup for SMS (Twilio)", () => {
  it("checks the account live and writes the number, the webhook URL and the token", async () => {
    const run = await setup([
      "--twilio-account-sid",
      ACCOUNT_SID,
      "--twilio-auth-token",
      AUTH_TOKEN,
      "--twilio-from-number",
      FROM_NUMBER,
      "--twilio-webhook-url",
      PUBLIC_WEBHOOK,
      "--twilio-api-url",
      twilio.url,
      "--sms-owner",
      "+15550000042",
    ]);
    expect(run.out).toContain("Twilio account Herald test account");
    expect(run.out).not.toContain(AUTH_TOKEN);
    expect(run.code).toBe(0);
    expect(configOf(run.home)["sms"]).toMatchObject({
      account_sid: ACCOUNT_SID,
      from_number: FROM_NUMBER,
      webhook_url: PUBLIC_WEBHOOK,
      allowed_users: ["+15550000042"],
    });
    expect(readFileSync(join(run.home, ".env"), "utf8")).toContain(`TWILIO_AUTH_TOKEN=${AUTH_TOKEN}`);
  });

  it("refuses a wrong auth token with the fix, and writes nothing", async () => {
    const run = await setup([
      "--twilio-account-sid",
      ACCOUNT_SID,
      "--twilio-auth-token",
      "not-the-token",
      "--twilio-api-url",
      twilio.url,
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/Twilio answered 401 for the account: the account SID or auth token is wrong/);
    expect(run.out).not.toContain("not-the-token");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});

describe("herald setup for iMessage (BlueBubbles)", () => {
  it("checks the server live and writes the address, the owner and the password", async () => {
    const run = await setup([
      "--bluebubbles-url",
      bb.url,
      "--bluebubbles-password",
      SERVER_PASSWORD,
      "--bluebubbles-owner",
      "+15550000042",
    ]);
    expect(run.out).toContain("BlueBubbles server 1.9.9");
    expect(run.out).not.toContain(SERVER_PASSWORD);
    expect(run.code).toBe(0);
    expect(configOf(run.home)["bluebubbles"]).toMatchObject({ url: bb.url, allowed_users: ["+15550000042"] });
    expect(readFileSync(join(run.home, ".env"), "utf8")).toContain(`BLUEBUBBLES_PASSWORD=${SERVER_PASSWORD}`);
  });

  it("refuses a wrong password with the fix, and writes nothing", async () => {
    const run = await setup(["--bluebubbles-url", bb.url, "--bluebubbles-password", "not-the-password"]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/BlueBubbles answered 401 to \/api\/v1\/server\/info: the password is wrong/);
    expect(run.out).not.toContain("not-the-password");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});
