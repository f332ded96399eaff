/** Webhook mode: `TELEGRAM_WEBHOOK_URL` set, updates pushed to `/webhooks/telegram`, the secret checked. */
import { afterEach, describe, expect, it } from "vitest";
import type { TelegramAdapter } from "../../adapters/telegram/index.js";
import { type TelegramRig, telegramRig, webhookServer } from "./telegram-helpers.js";

let rig: TelegramRig;
let server: { url: string; close(): Promise<void> } | undefined;
afterEach(async () => {
  await rig?.close();
  await server?.close();
  server = undefined;
});

async function webhookRig(secret?: string) {
  let adapter: TelegramAdapter | undefined;
  server = await webhookServer(() => adapter);
  rig = await telegramRig({ webhookUrl: server.url, ...(secret ? { webhookSecret: secret } : {}) });
  adapter = rig.adapter;
  return server;
}

describe("telegram: webhook", () => {
  it("registers the webhook with its secret and receives pushed updates, never polling", async () => {
    await webhookRig("s3cret-Value_1");
    await rig.start();
    expect(rig.fake.webhook()).toEqual({ url: server!.url, secretToken: "s3cret-Value_1" });
    expect(rig.fake.callsTo("setWebhook")[0]!.params).toMatchObject({
      allowed_updates: ["message", "callback_query"],
      drop_pending_updates: false,
    });
    const message = rig.fake.userMessage({ chatId: 111, text: "pushed" });
    expect(await rig.fake.deliverWebhook({ update_id: 1, message })).toBe(200);
    expect(rig.received.map((m) => [m.messageId, m.text])).toEqual([["111:1", "pushed"]]);
    expect(rig.fake.callsTo("getUpdates")).toHaveLength(0);
    expect(rig.adapter.status().state).toBe("running");
  });

  it("refuses a request with a wrong or missing secret", async () => {
    const { url } = await webhookRig("right-secret");
    await rig.start();
    const body = JSON.stringify({
      update_id: 5,
      message: rig.fake.userMessage({ chatId: 111, text: "forged" }),
    });
    const wrong = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "guess" },
      body,
    });
    const missing = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect([wrong.status, missing.status]).toEqual([401, 401]);
    expect(rig.received).toHaveLength(0);
  });

  it("answers 500 when the gateway could not record the update, so Telegram delivers it again", async () => {
    await webhookRig();
    let fail = true;
    await rig.start(async () => {
      if (fail) {
        fail = false;
        throw new Error("disk full");
      }
      return "accepted";
    });
    // Without TELEGRAM_WEBHOOK_SECRET a secret derived from the token is used; the token itself never is.
    const secret = rig.fake.webhook()!.secretToken!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(rig.fake.token).not.toContain(secret);
    const update = { update_id: 9, message: rig.fake.userMessage({ chatId: 111, text: "again" }) };
    expect(await rig.fake.deliverWebhook(update)).toBe(500);
    expect(await rig.fake.deliverWebhook(update)).toBe(200);
    expect(rig.received.map((m) => m.text)).toEqual(["again", "again"]);
  });
});
