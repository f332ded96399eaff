/**
 * Two bot accounts of one platform that receive by webhook, over the wire: Telegram in webhook mode (two
 * fake Bot APIs, two tokens), LINE (two fake channels, two secrets) and SMS (two numbers of one Twilio
 * account, one auth token, signatures bound to each number's URL), each account at its own path on
 * Herald's HTTP server (`/webhooks/telegram@family`, `/webhooks/line@shop`) with its own secret. An
 * update signed for one account and posted to the other's path is refused and never reaches the model;
 * each account's chats are keyed by it and its replies leave through its own token.
 */
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNEL_SECRET, CHANNEL_TOKEN, type FakeLine, lineId, startFakeLine } from "../fakes/line/index.js";
import { startFakeTelegram } from "../fakes/telegram/index.js";
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  FROM_NUMBER,
  PUBLIC_WEBHOOK,
  startFakeTwilio,
  type TwilioWebhook,
} from "../fakes/twilio/index.js";
import { atLeast, gatewayHealth, userTexts } from "../helpers/gateway-platform.js";
import { freePort } from "../helpers/net.js";
import { type ClosableFake, platformPerTest } from "../helpers/per-test.js";
import { botReplies } from "./telegram-helpers.js";

const running = platformPerTest<ClosableFake>();
/** Closes `fakes` after the test, once the gateway in front of them stopped. */
const track = (...fakes: ClosableFake[]) =>
  running.trackFake({ close: async () => void (await Promise.all(fakes.map((f) => f.close()))) });

const sessionKeys = (h: { state: { sessions: { list(o: { limit: number }): { key: string }[] } } }) =>
  h.state.sessions
    .list({ limit: 10 })
    .map((s) => s.key)
    .sort();

describe("telegram webhook mode with two bot accounts", () => {
  async function start(env: Record<string, string> = {}) {
    const work = await startFakeTelegram();
    const family = await startFakeTelegram({
      token: "7000000002:FAMILY-token_for_fake",
      username: "hearth_bot",
    });
    track(work, family);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/webhooks`;
    const h = await running.startHarness({
      configYaml: `telegram:\n  accounts:\n    - name: family\n      api_root: ${family.url}\n`,
      env: {
        API_SERVER_PORT: String(port),
        TELEGRAM_BOT_TOKEN: work.token,
        TELEGRAM_API_ROOT: work.url,
        TELEGRAM_WEBHOOK_URL: `${base}/telegram`,
        TELEGRAM_ALLOWED_USERS: "111",
        TELEGRAM_FAMILY_BOT_TOKEN: family.token,
        TELEGRAM_WEBHOOK_SECRET: "work-secret_1",
        TELEGRAM_FAMILY_WEBHOOK_URL: `${base}/telegram@family`,
        ...env,
      },
    });
    return { work, family, h, base };
  }

  it("registers each bot's own URL and secret, and each bot's updates are answered by that bot", async () => {
    const { work, family, h, base } = await start();
    const workHook = work.webhook()!;
    const familyHook = family.webhook()!;
    expect(workHook.url).toBe(`${base}/telegram`);
    expect(familyHook.url).toBe(`${base}/telegram@family`);
    // The section's secret is the default bot's alone; the account's is derived from its own token.
    expect(workHook.secretToken).toBe("work-secret_1");
    expect(familyHook.secretToken).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(familyHook.secretToken).not.toBe(workHook.secretToken);
    expect(work.callsTo("getUpdates")).toHaveLength(0);
    expect(family.callsTo("getUpdates")).toHaveLength(0);

    const toWork = work.userMessage({ chatId: 111, fromId: 111, text: "hello work" });
    const toFamily = family.userMessage({ chatId: 111, fromId: 111, text: "hello family" });
    expect(await work.deliverWebhook({ update_id: 1, message: toWork })).toBe(200);
    expect(await family.deliverWebhook({ update_id: 1, message: toFamily })).toBe(200);
    expect(await botReplies(work, 111, 1)).toEqual(["echo: hello work"]);
    expect(await botReplies(family, 111, 1)).toEqual(["echo: hello family"]);
    // Each reply went out with its own bot's token only (each fake accepts only its token).
    expect(work.callsTo("sendMessage", 111).map((c) => c.status)).toEqual([200]);
    expect(family.callsTo("sendMessage", 111).map((c) => c.status)).toEqual([200]);
    // The same DM id on two bots: two chats, keyed by the account.
    expect(sessionKeys(h)).toEqual(["telegram:dm:111", "telegram@family:dm:111"]);
  });

  it("refuses an update carrying one bot's secret at the other bot's path, and never handles it", async () => {
    const { work, family, h, base } = await start();
    const post = (path: string, secret: string, text: string) =>
      fetch(`${base}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
        body: JSON.stringify({
          update_id: 77,
          message: family.userMessage({ chatId: 111, fromId: 111, text }),
        }),
      });
    const familySecret = family.webhook()!.secretToken!;
    const workSecret = work.webhook()!.secretToken!;
    expect((await post("telegram", familySecret, "forged to work")).status).toBe(401);
    expect((await post("telegram%40family", workSecret, "forged to family")).status).toBe(401);
    // The right secret at the right path (the `@` percent-encoded, as some proxies send it) is taken.
    expect((await post("telegram%40family", familySecret, "genuine")).status).toBe(200);
    expect(await botReplies(family, 111, 1)).toEqual(["echo: genuine"]);
    expect(userTexts(h)).toEqual(["genuine"]);
    expect(work.callsTo("sendMessage")).toHaveLength(0);
    // A path no account has is no webhook.
    expect((await post("telegram@nobody", familySecret, "lost")).status).toBe(404);
  });

  it("an account without its own webhook URL polls; it never takes over the section's webhook", async () => {
    const { work, family, h, base } = await start({ TELEGRAM_FAMILY_WEBHOOK_URL: "" });
    expect(work.webhook()?.url).toBe(`${base}/telegram`);
    expect(family.webhook()).toBeUndefined();
    family.userSends({ chatId: 111, fromId: 111, text: "polled" });
    expect(await botReplies(family, 111, 1)).toEqual(["echo: polled"]);
    expect(family.callsTo("getUpdates").length).toBeGreaterThan(0);
    expect(sessionKeys(h)).toEqual(["telegram@family:dm:111"]);
  });

  it("reports an account whose token is refused under the account's own variable; the other bot runs on", async () => {
    const { work, h } = await start({ TELEGRAM_FAMILY_BOT_TOKEN: "7000000002:revoked" });
    const health = await gatewayHealth(h);
    expect(health.adapters["telegram"]?.state).toBe("running");
    const family = health.adapters["telegram@family"];
    expect(family?.state).toBe("failed");
    expect(family?.detail).toContain("TELEGRAM_FAMILY_BOT_TOKEN is set but getMe answered 401");
    expect(family?.detail).not.toContain("TELEGRAM_BOT_TOKEN");
    expect(work.webhook()?.url).toContain("/webhooks/telegram");
  });
});

describe("LINE with two bot accounts", () => {
  const ANN = lineId("U", "ann");
  const SHOP_SECRET = "fake-line-shop-secret-7777";
  const PUBLIC = "https://herald.example.com";

  async function start() {
    const main = await startFakeLine();
    const shop = await startFakeLine({
      channelSecret: SHOP_SECRET,
      channelToken: "fake-line-shop-token-8888",
    });
    track(main, shop);
    for (const fake of [main, shop]) fake.chats.add(ANN);
    const h = await running.startHarness({
      configYaml: `line:\n  accounts:\n    - name: shop\n      api_url: ${shop.url}\n      data_url: ${shop.url}\n`,
      env: {
        LINE_CHANNEL_SECRET: CHANNEL_SECRET,
        LINE_CHANNEL_ACCESS_TOKEN: CHANNEL_TOKEN,
        LINE_API_URL: main.url,
        LINE_DATA_URL: main.url,
        LINE_PUBLIC_URL: PUBLIC,
        LINE_ALLOWED_USERS: ANN,
        LINE_SHOP_CHANNEL_SECRET: SHOP_SECRET,
        LINE_SHOP_CHANNEL_ACCESS_TOKEN: "fake-line-shop-token-8888",
      },
    });
    main.webhookUrl = `${h.apiUrl}/webhooks/line`;
    shop.webhookUrl = `${h.apiUrl}/webhooks/line@shop`;
    return { main, shop, h };
  }

  const replies = (fake: FakeLine, count: number) => atLeast(() => fake.sentTo(ANN), count, 10_000);

  it("answers each channel's user through that channel, the shop's chat keyed by its account", async () => {
    const { main, shop, h } = await start();
    expect((await main.text({ from: ANN, text: "hi main" })).status).toBe(200);
    expect((await shop.text({ from: ANN, text: "hi shop" })).status).toBe(200);
    expect((await replies(main, 1)).map((s) => s.text)).toEqual(["echo: hi main"]);
    expect((await replies(shop, 1)).map((s) => s.text)).toEqual(["echo: hi shop"]);
    expect(sessionKeys(h)).toEqual([`line:dm:${ANN}`, `line@shop:dm:${ANN}`]);
  });

  it("refuses a delivery signed with the other channel's secret, at either path", async () => {
    const { main, shop, h } = await start();
    const body = JSON.stringify({
      destination: "x",
      events: [
        {
          type: "message",
          webhookEventId: "01HFORGED",
          deliveryContext: { isRedelivery: false },
          timestamp: Date.now(),
          mode: "active",
          replyToken: "forged-token",
          source: { type: "user", userId: ANN },
          message: { type: "text", id: "990001", quoteToken: "q", text: "forged" },
        },
      ],
    });
    const sign = (secret: string) => createHmac("sha256", secret).update(body).digest("base64");
    expect((await main.deliver([], { body, signature: sign(SHOP_SECRET) })).status).toBe(401);
    expect((await shop.deliver([], { body, signature: sign(CHANNEL_SECRET) })).status).toBe(401);
    // Signed with its own secret, the same body is the shop's.
    expect((await shop.deliver([], { body, signature: sign(SHOP_SECRET) })).status).toBe(200);
    expect((await replies(shop, 1)).map((s) => s.text)).toEqual(["echo: forged"]);
    expect(userTexts(h)).toEqual(["forged"]);
    expect(main.sentTo(ANN)).toHaveLength(0);
  });

  it("serves a file the shop sends from the shop's own path", async () => {
    const { main, shop, h } = await start();
    const photo = join(h.homeDir, "photo.png");
    writeFileSync(photo, "png bytes");
    const adapter = h.gateway.adapters.get("line@shop")!;
    await adapter.send(
      { platform: "line@shop", chatId: ANN },
      { text: "Here", idempotencyKey: "shop-file", files: [{ path: photo, mimeType: "image/png" }] },
    );
    const image = shop.sentTo(ANN).find((s) => s.message["type"] === "image")!;
    const url = String(image.message["originalContentUrl"]);
    expect(url.startsWith(`${PUBLIC}/webhooks/line@shop/media/`)).toBe(true);
    const served = await fetch(url.replace(PUBLIC, h.apiUrl));
    expect(await served.text()).toBe("png bytes");
    // The other account does not serve it.
    expect(
      (await fetch(url.replace(`${PUBLIC}/webhooks/line@shop`, `${h.apiUrl}/webhooks/line`))).status,
    ).toBe(404);
    expect(main.sentTo(ANN)).toHaveLength(0);
  });
});

describe("SMS with two numbers of one Twilio account", () => {
  const ANN = "+15550000042";
  const SHOP_NUMBER = "+15550000002";
  const SHOP_PUBLIC = "https://herald.example.com/webhooks/sms@shop";

  async function start() {
    const fake = await startFakeTwilio();
    track(fake);
    const h = await running.startHarness({
      configYaml: "sms:\n  accounts:\n    - name: shop\n",
      env: {
        TWILIO_ACCOUNT_SID: ACCOUNT_SID,
        TWILIO_AUTH_TOKEN: AUTH_TOKEN,
        TWILIO_FROM_NUMBER: FROM_NUMBER,
        TWILIO_WEBHOOK_URL: PUBLIC_WEBHOOK,
        TWILIO_API_URL: fake.url,
        SMS_ALLOWED_USERS: ANN,
        // The second number shares the Twilio account: only its number and webhook are its own.
        TWILIO_SHOP_FROM_NUMBER: SHOP_NUMBER,
        TWILIO_SHOP_WEBHOOK_URL: SHOP_PUBLIC,
      },
    });
    fake.webhookUrl = `${h.apiUrl}/webhooks/sms`;
    const shop: TwilioWebhook = { url: `${h.apiUrl}/webhooks/sms@shop`, publicUrl: SHOP_PUBLIC };
    return { fake, h, shop };
  }

  it("answers each number from that number, the shop's chat keyed by its account", async () => {
    const { fake, h, shop } = await start();
    expect((await fake.sms({ from: ANN, body: "to main" })).status).toBe(200);
    expect((await fake.sms({ from: ANN, body: "to shop", to: SHOP_NUMBER, at: shop })).status).toBe(200);
    const sent = await atLeast(() => fake.sentTo(ANN), 2, 10_000);
    expect(sent.map((m) => [m.from, m.body]).sort()).toEqual([
      [FROM_NUMBER, "echo: to main"],
      [SHOP_NUMBER, "echo: to shop"],
    ]);
    expect(sessionKeys(h)).toEqual([`sms:dm:${ANN}`, `sms@shop:dm:${ANN}`]);
  });

  it("refuses a request signed for one number's URL at the other's path, though both share the auth token", async () => {
    const { fake, h, shop } = await start();
    // Signed over the main number's URL, posted to the shop's path; and the other way round.
    const toShop = await fake.sms({
      from: ANN,
      body: "forged to shop",
      to: SHOP_NUMBER,
      at: { url: shop.url, publicUrl: PUBLIC_WEBHOOK },
    });
    const toMain = await fake.sms({
      from: ANN,
      body: "forged to main",
      at: { url: fake.webhookUrl, publicUrl: SHOP_PUBLIC },
    });
    expect([toShop.status, toMain.status]).toEqual([403, 403]);
    expect((await fake.sms({ from: ANN, body: "genuine", to: SHOP_NUMBER, at: shop })).status).toBe(200);
    const [reply] = await atLeast(() => fake.sentTo(ANN), 1, 10_000);
    expect([reply!.from, reply!.body]).toEqual([SHOP_NUMBER, "echo: genuine"]);
    expect(userTexts(h)).toEqual(["genuine"]);
  });
});
