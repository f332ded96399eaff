/**
 * WeCom through the whole gateway: the fake WeCom server API (tokens, app messages, media), callbacks
 * pushed encrypted and signed to `/webhooks/wecom` on the gateway's HTTP server as WeCom sends them,
 * the real runner and the scripted model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AES_KEY,
  AGENT_ID,
  CORP_ID,
  type FakeWecom,
  mediaXml,
  SECRET,
  startFakeWecom,
  TOKEN,
  textXml,
} from "../fakes/wecom/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN = "AnnLee";
const BOB = "BobWang";
const STRANGER = "Stranger";
const TEAM = "wrTeamChat01";

const { running, start } = gatewayPlatform<FakeWecom>({
  startFake: startFakeWecom,
  prepare: (fake) => {
    for (const u of [ANN, BOB, STRANGER]) fake.addUser(u);
    fake.addAppchat(TEAM);
  },
  env: (fake) => ({
    WECOM_CORP_ID: CORP_ID,
    WECOM_AGENT_ID: String(AGENT_ID),
    WECOM_SECRET: SECRET,
    WECOM_TOKEN: TOKEN,
    WECOM_ENCODING_AES_KEY: AES_KEY,
    WECOM_API_URL: fake.url,
    WECOM_ALLOWED_USERS: `${ANN},${BOB}`,
  }),
});

const hook = (h: Harness) => `${h.apiUrl}/webhooks/wecom`;

const replies = (fake: FakeWecom, to: string, count: number): Promise<string[]> =>
  atLeast(() => fake.textsTo(to), count);

describe("wecom through the gateway", () => {
  it("answers the echostr check and a DM; sends to an app group chat; reports running", async () => {
    const { fake, h } = await start();
    const check = await fake.verifyUrl(hook(h), "echo-1234567890");
    expect(check).toEqual({ status: 200, body: "echo-1234567890" });
    expect((await fake.verifyUrl(hook(h), "echo-x", { token: "wrong" })).status).toBe(401);

    const res = await fake.push(hook(h), textXml(ANN, "Hello there"));
    expect(res).toEqual({ status: 200, body: "success" });
    expect(await replies(fake, ANN, 1)).toEqual(["echo: Hello there"]);
    expect(fake.sent[0]).toMatchObject({ method: "message/send", msgtype: "markdown" });

    await h.gateway.adapters
      .get("wecom")!
      .send({ platform: "wecom", chatId: `#${TEAM}` }, { text: "**Daily report**", idempotencyKey: "g1" });
    expect(fake.sent.at(-1)).toMatchObject({ method: "appchat/send", to: TEAM, msgtype: "markdown" });
    expect(fake.textsTo(TEAM)).toEqual(["**Daily report**"]);
    expect(fake.tokensIssued).toBe(1);
    const health = await gatewayHealth(h);
    expect(health.adapters["wecom"]?.state).toBe("running");
  });

  it("a file sent in reaches the model through media/get; a file sent out is uploaded and sent", async () => {
    const { fake, h } = await start();
    fake.addMedia("MEDIA_list_1", Buffer.from("Shopping list: apples, pears"), "text/plain", "list.txt");
    await fake.push(hook(h), mediaXml(ANN, "file", "MEDIA_list_1", "7001"));
    await replies(fake, ANN, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.some((c) => c.method === "media/get" && c.query["media_id"] === "MEDIA_list_1")).toBe(
      true,
    );

    const path = join(h.homeDir, "report.txt");
    writeFileSync(path, "the report");
    await h.gateway.adapters
      .get("wecom")!
      .send(
        { platform: "wecom", chatId: ANN },
        { text: "Here it is", idempotencyKey: "f1", files: [{ path, mimeType: "text/plain" }] },
      );
    const file = fake.sent.find((s) => s.msgtype === "file")!;
    const mediaId = (file.body["file"] as { media_id: string }).media_id;
    expect(fake.uploads.get(mediaId)).toMatchObject({ name: "report.txt", type: "file" });
    expect(fake.uploads.get(mediaId)!.bytes.toString()).toBe("the report");
  });

  it("a send refused by the frequency limit (45033) is sent once on retry; an expired token (42001) is refreshed", async () => {
    const { fake, h } = await start();
    fake.fault("message/send", { errcode: 45033, errmsg: "api concurrent out of limit" });
    await fake.push(hook(h), textXml(ANN, "busy?"));
    expect(await replies(fake, ANN, 1)).toEqual(["echo: busy?"]);
    expect(fake.calls.filter((c) => c.method === "message/send")).toHaveLength(2);

    fake.expireTokens();
    await fake.push(hook(h), textXml(ANN, "still there?"));
    expect(await replies(fake, ANN, 2)).toEqual(["echo: busy?", "echo: still there?"]);
    expect(fake.tokensIssued).toBe(2);
  });

  it("refuses a bad signature, a stale timestamp, another key or Corp ID, and logs malformed XML; the next message is answered", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const xml = textXml(ANN, "forged");
    expect((await fake.push(hook(h), xml, { token: "not-the-token" })).status).toBe(401);
    expect(
      (await fake.push(hook(h), xml, { timestampSec: Math.floor(Date.now() / 1000) - 3600 })).status,
    ).toBe(401);
    expect((await fake.push(hook(h), xml, { corpId: "wwSomeoneElse" })).status).toBe(401);
    const otherKey = "B".repeat(43);
    expect([400, 401]).toContain((await fake.push(hook(h), xml, { aesKey: otherKey })).status);
    expect((await fetch(hook(h), { method: "POST", body: "not xml at all" })).status).toBe(400);
    expect((await fake.push(hook(h), "<xml><MsgType>text</MsgType></xml>")).status).toBe(200);

    await fake.push(hook(h), textXml(ANN, "the real one"));
    expect(await replies(fake, ANN, 1)).toEqual(["echo: the real one"]);
    expect(h.llm.requests).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("wecom request refused");
    expect(log).toContain("msg_signature does not match");
    expect(log).toContain("wecom callback malformed; skipped");
    for (const secret of [SECRET, TOKEN, AES_KEY]) expect(log).not.toContain(secret);
  });

  it("a message WeCom retries after a restart is answered once; a stranger gets a pairing code", async () => {
    const { fake, h } = await start();
    const first = textXml(ANN, "first", "9001");
    await fake.push(hook(h), first);
    await replies(fake, ANN, 1);
    await h.restart();
    expect((await fake.push(hook(h), first)).body).toBe("success");
    await fake.push(hook(h), textXml(ANN, "second", "9002"));
    expect(await replies(fake, ANN, 2)).toEqual(["echo: first", "echo: second"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(2);

    await fake.push(hook(h), textXml(STRANGER, "hi", "9003"));
    expect((await replies(fake, STRANGER, 1))[0]).toMatch(/pairing code/);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a refused Secret fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeWecom());
    const h = await running.startHarness({
      env: {
        WECOM_CORP_ID: CORP_ID,
        WECOM_AGENT_ID: String(AGENT_ID),
        WECOM_SECRET: "wrong-secret-4711",
        WECOM_TOKEN: TOKEN,
        WECOM_ENCODING_AES_KEY: AES_KEY,
        WECOM_API_URL: fake.url,
      },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["wecom"]?.state).toBe("failed");
    expect(health.adapters["wecom"]?.detail).toMatch(/WECOM_SECRET/);
    expect(health.adapters["wecom"]?.detail).not.toContain("wrong-secret-4711");
  });
});
