/**
 * Faults while receiving: a bad token fails `start()` with the fix, a second consumer of the token (409)
 * is reported with what to do, a network outage or a 5xx/429 from the API is ridden out with backoff.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import { type TelegramRig, telegramRig } from "./telegram-helpers.js";

let rig: TelegramRig;
afterEach(async () => {
  await rig?.close();
});

describe("telegram: faults", () => {
  it("checks the token with getMe at start, then polls at once", async () => {
    rig = await telegramRig();
    await rig.start();
    await rig.fake.waitFor(() => rig.fake.callsTo("getUpdates").length > 0);
    expect(rig.fake.calls.slice(0, 2).map((c) => c.method)).toEqual(["getMe", "getUpdates"]);
    expect(rig.fake.callsTo("getUpdates")[0]!.params).toMatchObject({
      allowed_updates: ["message", "callback_query"],
    });
    expect(rig.adapter.status()).toEqual({ state: "running" });
  });

  it("a webhook left set by an earlier run is deleted when the first poll meets it, and messages flow", async () => {
    rig = await telegramRig();
    const set = await fetch(`${rig.fake.url}/bot${rig.fake.token}/setWebhook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "https://old.example.com/webhooks/telegram" }),
    });
    expect(set.status).toBe(200);
    rig.fake.userSends({ chatId: 111, text: "while the webhook was set" });
    await rig.start();
    await rig.waitForReceived(1);
    expect(rig.received[0]!.text).toBe("while the webhook was set");
    expect(rig.fake.webhook()).toBeUndefined();
    expect(rig.fake.calls.map((c) => c.method).slice(1, 5)).toEqual([
      "getMe",
      "getUpdates",
      "deleteWebhook",
      "getUpdates",
    ]);
    expect(rig.logs.some((l) => l.msg.includes("a webhook is set for this bot; deleting it"))).toBe(true);
    await rig.fake.waitFor(() => rig.adapter.status().state === "running");
  });

  it("a bad token fails start() with the fix, and never logs the token", async () => {
    rig = await telegramRig({ botToken: "123456:wrong-token-value" });
    const error = await rig.start().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: "platform_auth_failed", retryable: false });
    expect((error as Error).message).toMatch(/TELEGRAM_BOT_TOKEN.*401.*@BotFather/);
    expect((error as Error).message).not.toContain("wrong-token-value");
    expect(rig.adapter.status().state).toBe("failed");
    expect(rig.fake.callsTo("getUpdates")).toHaveLength(0);
    expect(JSON.stringify(rig.logs)).not.toContain("wrong-token-value");
    // Another adapter (here: the right token) is unaffected.
    const good = rig.newAdapter({ botToken: rig.fake.token });
    await good.start(async () => "accepted");
    expect(good.status().state).toBe("running");
  });

  it("reports a second consumer of the token (409) with what to do, and recovers when it is gone", async () => {
    rig = await telegramRig();
    await rig.start();
    await rig.fake.waitFor(() => rig.fake.callsTo("getUpdates").length > 0);
    // Another process polls with the same token: Telegram answers our poll with 409.
    const intruder = rig.newAdapter();
    await intruder.start(async () => "accepted");
    await rig.fake.waitFor(() =>
      rig.logs.some((l) => l.msg.includes("another process is receiving updates for this bot token")),
    );
    const report = rig.logs.find((l) => l.msg.includes("409 Conflict"))!;
    expect(report.level).toBe(50);
    expect(report.msg).toMatch(/stop the other .*instance/);
    await intruder.stop();
    rig.fake.userSends({ chatId: 111, text: "back?" });
    await rig.waitForReceived(1);
    expect(rig.adapter.status().state).toBe("running");
  });

  it("rides out a network outage with backoff and receives what was sent meanwhile", async () => {
    rig = await telegramRig();
    await rig.start();
    await rig.fake.waitFor(() => rig.fake.callsTo("getUpdates").length > 0);
    await rig.fake.disconnect();
    await new Promise((r) => setTimeout(r, 300));
    expect(rig.adapter.status().state).toBe("reconnecting");
    rig.fake.userSends({ chatId: 111, text: "sent during the outage" });
    await rig.fake.reconnect();
    await rig.waitForReceived(1);
    expect(rig.received[0]!.text).toBe("sent during the outage");
    expect(rig.logs.some((l) => l.msg === "telegram unreachable, reconnecting")).toBe(true);
    expect(rig.logs.some((l) => l.msg === "telegram polling recovered")).toBe(true);
    await rig.fake.waitFor(() => rig.adapter.status().state === "running");
  });

  it("retries getUpdates after a 5xx page and after a 429's retry_after", async () => {
    rig = await telegramRig();
    rig.fake.fault("getUpdates", {
      status: 502,
      rawBody: "<html><body>502 Bad Gateway</body></html>",
      times: 2,
    });
    rig.fake.fault("getUpdates", { status: 429, retryAfter: 1 });
    await rig.start();
    rig.fake.userSends({ chatId: 111, text: "hello" });
    await rig.waitForReceived(1);
    const statuses = rig.fake.callsTo("getUpdates").map((c) => c.status);
    expect(statuses.slice(0, 4)).toEqual([502, 502, 429, 200]);
    const [, , limited, next] = rig.fake.callsTo("getUpdates");
    expect(next!.at - limited!.at).toBeGreaterThanOrEqual(900);
  });

  it("answers slowly-answered calls without giving up", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.fault("sendMessage", { delayMs: 400 });
    const result = await rig.adapter.send(
      { platform: "telegram", chatId: "111" },
      { text: "late but there", idempotencyKey: "s" },
    );
    expect(result.messageIds).toHaveLength(1);
    expect(rig.fake.botMessages(111).map((m) => m.text)).toEqual(["late but there"]);
  });
});
