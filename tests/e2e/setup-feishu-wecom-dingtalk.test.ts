/**
 * `herald setup --non-interactive` for Feishu / Lark, WeCom and DingTalk: each platform's credentials
 * checked live against its fake (a tenant token and bot info; gettoken; an OAuth access token), the
 * settings written to config.yaml and the secrets to .env; a refused secret writes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { CLIENT_ID, CLIENT_SECRET, type FakeDingtalk, startFakeDingtalk } from "../fakes/dingtalk/index.js";
import {
  APP_ID,
  APP_SECRET,
  ENCRYPT_KEY,
  type FakeFeishu,
  startFakeFeishu,
  VERIFICATION_TOKEN,
} from "../fakes/feishu/index.js";
import {
  AES_KEY,
  AGENT_ID,
  CORP_ID,
  type FakeWecom,
  SECRET,
  startFakeWecom,
  TOKEN,
} from "../fakes/wecom/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let feishu: FakeFeishu;
let wecom: FakeWecom;
let dingtalk: FakeDingtalk;
beforeAll(async () => {
  [feishu, wecom, dingtalk] = await Promise.all([startFakeFeishu(), startFakeWecom(), startFakeDingtalk()]);
});
afterAll(async () => {
  await Promise.all([feishu?.close(), wecom?.close(), dingtalk?.close()]);
});

const setup = nonInteractiveSetup("cn");
const configOf = (home: string) =>
  parseYaml(readFileSync(join(home, "config.yaml"), "utf8")) as Record<string, Record<string, unknown>>;
const envOf = (home: string) => readFileSync(join(home, ".env"), "utf8");

describe("herald setup for Feishu, WeCom and DingTalk", () => {
  it("Feishu: checks the app live and writes the app id, domain, owner and secrets", async () => {
    const run = await setup([
      "--feishu-domain",
      "lark",
      "--feishu-api-url",
      feishu.url,
      "--feishu-app-id",
      APP_ID,
      "--feishu-app-secret",
      APP_SECRET,
      "--feishu-encrypt-key",
      ENCRYPT_KEY,
      "--feishu-verification-token",
      VERIFICATION_TOKEN,
      "--feishu-owner",
      "ou_owner01",
    ]);
    expect(run.out).toContain("Feishu bot Herald");
    expect(run.code).toBe(0);
    expect(configOf(run.home)["feishu"]).toMatchObject({
      app_id: APP_ID,
      domain: "lark",
      api_url: feishu.url,
      allowed_users: ["ou_owner01"],
    });
    for (const s of [APP_SECRET, ENCRYPT_KEY, VERIFICATION_TOKEN]) {
      expect(run.out).not.toContain(s);
      expect(envOf(run.home)).toContain(s);
    }
  });

  it("Feishu: a refused App Secret writes nothing", async () => {
    const run = await setup([
      "--feishu-api-url",
      feishu.url,
      "--feishu-app-id",
      APP_ID,
      "--feishu-app-secret",
      "not-the-secret",
      "--feishu-encrypt-key",
      ENCRYPT_KEY,
      "--feishu-verification-token",
      VERIFICATION_TOKEN,
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/Feishu refused the App ID \/ App Secret/);
    expect(run.out).not.toContain("not-the-secret");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });

  it("WeCom: checks the Secret with gettoken and writes the corp, agent and secrets; a wrong Secret writes nothing", async () => {
    const ok = await setup([
      "--wecom-api-url",
      wecom.url,
      "--wecom-corp-id",
      CORP_ID,
      "--wecom-agent-id",
      String(AGENT_ID),
      "--wecom-secret",
      SECRET,
      "--wecom-token",
      TOKEN,
      "--wecom-encoding-aes-key",
      AES_KEY,
    ]);
    expect(ok.code).toBe(0);
    expect(configOf(ok.home)["wecom"]).toMatchObject({ corp_id: CORP_ID, agent_id: AGENT_ID });
    expect(envOf(ok.home)).toContain(`WECOM_ENCODING_AES_KEY=${AES_KEY}`);
    const refused = await setup([
      "--wecom-api-url",
      wecom.url,
      "--wecom-corp-id",
      CORP_ID,
      "--wecom-agent-id",
      String(AGENT_ID),
      "--wecom-secret",
      "wrong-secret",
      "--wecom-token",
      TOKEN,
      "--wecom-encoding-aes-key",
      AES_KEY,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/WeCom refused the Corp ID \/ Secret \(gettoken errcode 40001\)/);
    expect(existsSync(join(refused.home, "config.yaml"))).toBe(false);
  });

  it("DingTalk: checks the app with an access token; a wrong secret writes nothing", async () => {
    const ok = await setup([
      "--dingtalk-api-url",
      dingtalk.url,
      "--dingtalk-client-id",
      CLIENT_ID,
      "--dingtalk-client-secret",
      CLIENT_SECRET,
    ]);
    expect(ok.code).toBe(0);
    expect(configOf(ok.home)["dingtalk"]).toMatchObject({ client_id: CLIENT_ID, api_url: dingtalk.url });
    expect(envOf(ok.home)).toContain(`DINGTALK_CLIENT_SECRET=${CLIENT_SECRET}`);
    const refused = await setup([
      "--dingtalk-api-url",
      dingtalk.url,
      "--dingtalk-client-id",
      CLIENT_ID,
      "--dingtalk-client-secret",
      "nope-4711",
    ]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/DingTalk answered 400 to oauth2\/accessToken/);
    expect(refused.out).not.toContain("nope-4711");
    expect(existsSync(join(refused.home, "config.yaml"))).toBe(false);
  });
});
