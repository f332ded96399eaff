/**
 * SMS (Twilio) through the whole gateway: the fake Twilio REST API and its signed webhook deliveries,
 * the real adapter configured by env as an operator would, the real runner and the scripted model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_HELP_TEXT } from "../../adapters/sms/index.js";
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  type FakeTwilio,
  FROM_NUMBER,
  PUBLIC_WEBHOOK,
  startFakeTwilio,
  type TwilioSent,
} from "../fakes/twilio/index.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN = "+15550000042";
const BOB = "+15550000043";
const STRANGER = "+15550000099";

const { running, start } = gatewayPlatform<FakeTwilio>({
  startFake: startFakeTwilio,
  env: (fake) => ({
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_FROM_NUMBER: FROM_NUMBER,
    TWILIO_WEBHOOK_URL: PUBLIC_WEBHOOK,
    TWILIO_API_URL: fake.url,
    SMS_ALLOWED_USERS: `${ANN},${BOB}`,
  }),
  connect: (fake, h) => {
    fake.webhookUrl = `${h.apiUrl}/webhooks/sms`;
  },
});

const replies = (fake: FakeTwilio, number: string, count: number): Promise<TwilioSent[]> =>
  atLeast(() => fake.sentTo(number), count, 10_000);

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

describe("sms through the gateway", () => {
  it("answers a text from the Twilio number, acknowledges with empty TwiML, and reports running", async () => {
    const { fake, h } = await start();
    const delivered = await fake.sms({ from: ANN, body: "Hello there" });
    expect(delivered).toMatchObject({ status: 200, body: EMPTY_TWIML });
    const [reply] = await replies(fake, ANN, 1);
    expect(reply).toMatchObject({ from: FROM_NUMBER, body: "echo: Hello there" });
    const health = await gatewayHealth(h);
    expect(health.adapters["sms"]?.state).toBe("running");
  });

  it("each number has its own session; Markdown arrives as plain text; a long reply comes in messages of 1,600", async () => {
    const { fake, h } = await start();
    const count = (req: { messages: { role: string }[] }) =>
      req.messages.filter((m) => m.role === "user").length;
    h.llm.script((req) => ({ text: `**seen** ${count(req)}` }));
    await fake.sms({ from: ANN, body: "one" });
    await replies(fake, ANN, 1);
    h.llm.script((req) => ({ text: `**seen** ${count(req)}` }));
    await fake.sms({ from: BOB, body: "one" });
    expect((await replies(fake, BOB, 1))[0]!.body).toBe("seen 1");
    const long = Array.from({ length: 700 }, (_, i) => `word${i}`).join(" ");
    h.llm.script({ text: long });
    await fake.sms({ from: ANN, body: "two" });
    await replies(fake, ANN, 4);
    await h.gateway.runner.outbox.idle();
    const parts = fake.sentTo(ANN).slice(1);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) expect(part.body.length).toBeLessThanOrEqual(1600);
    expect(
      parts
        .map((p) => p.body)
        .join(" ")
        .split(/\s+/),
    ).toEqual(long.split(" "));
    expect(fake.sentTo(ANN)[0]!.body).toBe("seen 1");
  });

  it("STOP ends all sends and turns until START; HELP is answered with the help text and no turn", async () => {
    const { fake, h } = await start();
    expect((await fake.sms({ from: ANN, body: "help" })).body).toContain(DEFAULT_HELP_TEXT.slice(0, 40));
    expect((await fake.sms({ from: ANN, body: "Stop" })).body).toBe(EMPTY_TWIML);
    await fake.sms({ from: ANN, body: "are you there?" });
    const adapter = h.gateway.adapters.get("sms")!;
    await expect(
      adapter.send({ platform: "sms", chatId: ANN }, { text: "a reminder", idempotencyKey: "after-stop" }),
    ).rejects.toMatchObject({ retryable: false, message: expect.stringContaining("opted out with STOP") });
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(ANN)).toEqual([]);
    expect(h.llm.requests).toHaveLength(0);

    // Opted out survives a restart.
    await h.restart();
    await fake.sms({ from: ANN, body: "still me" });
    expect(fake.sentTo(ANN)).toEqual([]);
    expect((await fake.sms({ from: ANN, body: "START" })).body).toBe(EMPTY_TWIML);
    await fake.sms({ from: ANN, body: "back again" });
    expect((await replies(fake, ANN, 1))[0]!.body).toBe("echo: back again");
    expect(h.llm.requests).toHaveLength(1);
  });

  it("a number Twilio reports unsubscribed (21610) gets no retries and is treated as opted out", async () => {
    const { fake, h } = await start();
    fake.unsubscribed.add(BOB);
    await fake.sms({ from: BOB, body: "hi" });
    await vi.waitFor(() => expect(h.llm.requests).toHaveLength(1));
    await h.gateway.runner.outbox.idle();
    expect(fake.calls.filter((c) => c.path.endsWith("/Messages.json"))).toHaveLength(1);
    await fake.sms({ from: BOB, body: "again" });
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(1);
  });

  it("gives an unknown number a pairing code and no model call", async () => {
    const { fake, h } = await start();
    await fake.sms({ from: STRANGER, body: "hi" });
    expect((await replies(fake, STRANGER, 1))[0]!.body).toMatch(/pairing code is [A-Z0-9]+/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("MMS media comes in with Twilio basic auth; a file goes out as MMS media served under the webhook URL", async () => {
    const { fake, h } = await start();
    await fake.sms({
      from: ANN,
      body: "what is in this?",
      media: [{ bytes: Buffer.from("Shopping list: apples, pears"), mimeType: "text/plain" }],
    });
    await replies(fake, ANN, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    const download = fake.calls.find((c) => c.path.includes("/Media/"));
    expect(download?.auth).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString("base64")}`);

    const photo = join(h.homeDir, "photo.jpg");
    writeFileSync(photo, "jpeg bytes");
    await h.gateway.adapters
      .get("sms")!
      .send(
        { platform: "sms", chatId: ANN },
        { text: "Here it is", idempotencyKey: "mms-out", files: [{ path: photo, mimeType: "image/jpeg" }] },
      );
    const out = fake.sentTo(ANN).at(-1)!;
    expect(out.body).toBe("Here it is");
    expect(out.mediaUrl).toHaveLength(1);
    expect(out.mediaUrl[0]!.startsWith(`${PUBLIC_WEBHOOK}/media/`)).toBe(true);
    const served = await fetch(out.mediaUrl[0]!.replace("https://herald.example.com", h.apiUrl));
    expect(served.headers.get("content-type")).toBe("image/jpeg");
    expect(await served.text()).toBe("jpeg bytes");
  });

  it("a reply refused with 429 is sent once after the Retry-After wait", async () => {
    const { fake, h } = await start();
    fake.fault("messages", {
      status: 429,
      headers: { "Retry-After": "1" },
      body: { code: 20429, message: "Too Many Requests", status: 429 },
    });
    await fake.sms({ from: ANN, body: "busy?" });
    const started = Date.now();
    expect((await replies(fake, ANN, 1))[0]!.body).toBe("echo: busy?");
    await h.gateway.runner.outbox.idle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.sentTo(ANN)).toHaveLength(1);
    expect(fake.calls.filter((c) => c.path.endsWith("/Messages.json"))).toHaveLength(2);
  });

  it("a badly signed or malformed webhook is refused and logged; the adapter goes on", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const params = {
      MessageSid: `SM${"1".repeat(32)}`,
      AccountSid: ACCOUNT_SID,
      From: ANN,
      To: FROM_NUMBER,
      Body: "forged",
    };
    expect((await fake.deliver(params, "bm90LWEtc2lnbmF0dXJl")).status).toBe(403);
    // Signed, but not what Twilio sends.
    expect((await fake.deliver({ From: ANN, Body: "no sid" })).status).toBe(400);
    expect((await fake.deliver({ ...params, AccountSid: `AC${"0".repeat(32)}` })).status).toBe(400);
    await fake.sms({ from: ANN, body: "still here" });
    expect((await replies(fake, ANN, 1)).map((m) => m.body)).toEqual(["echo: still here"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("sms webhook signature invalid; refused");
    expect(log).toContain("sms webhook malformed; refused");
    expect(log).not.toContain(AUTH_TOKEN);
  });

  it("a webhook Twilio retries after a restart is answered once; the next message is answered", async () => {
    const { fake, h } = await start();
    const first = await fake.sms({ from: ANN, body: "first" });
    await replies(fake, ANN, 1);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    expect((await fake.deliver(first.params)).status).toBe(200);
    await fake.sms({ from: ANN, body: "second" });
    await replies(fake, ANN, 2);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(ANN).map((m) => m.body)).toEqual(["echo: first", "echo: second"]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("wrong credentials fail the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeTwilio());
    const h = await running.startHarness({
      env: {
        TWILIO_ACCOUNT_SID: ACCOUNT_SID,
        TWILIO_AUTH_TOKEN: "tok-revoked-4711",
        TWILIO_FROM_NUMBER: FROM_NUMBER,
        TWILIO_WEBHOOK_URL: PUBLIC_WEBHOOK,
        TWILIO_API_URL: fake.url,
      },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["sms"]?.state).toBe("failed");
    expect(health.adapters["sms"]?.detail).toMatch(/TWILIO_AUTH_TOKEN.*Twilio Console/);
    expect(health.adapters["sms"]?.detail).not.toContain("tok-revoked-4711");
  });
});
