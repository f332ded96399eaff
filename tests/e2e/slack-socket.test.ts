/**
 * The Slack adapter over Socket Mode: the real SocketModeClient connects to the fake's WebSocket via
 * `apps.connections.open`, receives envelopes, acknowledges them once recorded, and reconnects when
 * Slack asks it to or the connection drops.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import { type FakeSlack, loadFixture, startFakeSlack } from "../fakes/slack/index.js";
import { captureLogger, type RunningAdapter, startSlackAdapter } from "./slack-helpers.js";

let fake: FakeSlack;
let running: RunningAdapter | undefined;

beforeEach(async () => {
  fake = await startFakeSlack();
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await fake.close();
});

const start = async () => {
  running = await startSlackAdapter(fake, { appToken: fake.appToken });
  return running;
};

describe("Socket Mode", () => {
  it("a DM turn: event in, acknowledged once recorded, reply out", async () => {
    const { adapter, gateway } = await start();
    expect(fake.connectionCount()).toBe(1);
    expect(fake.callsOf("apps.connections.open")[0]!.token).toBe(fake.appToken);
    expect(adapter.status()).toEqual({ state: "running" });

    const held = gateway.hold();
    const envelope = fake.pushEvent(loadFixture("message-im"));
    await held.entered;
    expect(envelope.isAcked()).toBe(false);
    held.release();
    await envelope.acked;

    const [msg] = gateway.calls;
    expect(msg).toMatchObject({ messageId: "D0ALICE01:1700000001.000100", chatType: "dm", mentioned: true });
    await adapter.send(msg!.chat, { text: "**Sunny**", replyToId: msg!.replyToId, idempotencyKey: "r" });
    expect(fake.callsOf("chat.postMessage")[0]!.args).toMatchObject({
      channel: "D0ALICE01",
      text: "*Sunny*",
    });
  });

  it("reconnects when Slack asks for it and when the connection drops, and keeps receiving", async () => {
    const { adapter, gateway } = await start();

    fake.requestReconnect();
    await fake.waitForConnections(2);
    await fake.pushEvent(loadFixture("message-im")).acked;

    fake.dropConnection();
    await fake.waitForConnections(3);
    await fake.pushEvent(loadFixture("message-channel")).acked;

    expect(gateway.accepted().map((m) => m.messageId)).toEqual([
      "D0ALICE01:1700000001.000100",
      "C0GENERAL1:1700000002.000200",
    ]);
    expect(fake.callsOf("apps.connections.open")).toHaveLength(3);
    await expect.poll(() => adapter.status().state).toBe("running");
  });

  it("keeps trying when apps.connections.open fails during a reconnect", async () => {
    const { gateway } = await start();
    fake.inject("apps.connections.open", { kind: "http", status: 500 }, 2);
    fake.dropConnection();
    await fake.waitForConnections(2);
    expect(fake.callsOf("apps.connections.open")).toHaveLength(4);
    await fake.pushEvent(loadFixture("message-im")).acked;
    expect(gateway.calls).toHaveLength(1);
  });

  it("an event the gateway could not record is not acknowledged; Slack's redelivery is processed once", async () => {
    const { gateway } = await start();
    gateway.failNext();
    const first = fake.pushEvent(loadFixture("message-im"));
    await gateway.waitForCalls(1);
    // A later envelope's ack proves the failed one's ack would have been sent by now.
    await fake.pushEvent(loadFixture("bot-message")).acked;
    expect(first.isAcked()).toBe(false);

    await fake.pushEvent(loadFixture("message-im"), { retryAttempt: 1, retryReason: "timeout" }).acked;
    expect(gateway.outcomes).toEqual(["accepted"]);
  });

  it("a bad app token fails start with the fix, and opens no connection", async () => {
    const err = await startSlackAdapter(fake, { appToken: "xapp-1-A0001-wrong" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as Error).message).toContain("SLACK_APP_TOKEN");
    expect((err as Error).message).toContain("connections:write");
    expect(fake.connectionCount()).toBe(0);
  });

  it("never logs the app token or the bot token, even at trace level", async () => {
    const log = captureLogger();
    running = await startSlackAdapter(fake, { appToken: fake.appToken }, log.logger);
    fake.requestReconnect();
    await fake.waitForConnections(2);
    await fake.pushEvent(loadFixture("message-im")).acked;
    const text = log.text();
    expect(text).toContain("slack sdk");
    expect(text).not.toContain(fake.appToken);
    expect(text).not.toContain(fake.botToken);
  });

  it("HTTP webhooks are not served in Socket Mode", async () => {
    const { adapter } = await start();
    const res = await adapter.handleWebhook(
      new Request("http://127.0.0.1/webhooks/slack", { method: "POST", body: "{}" }),
    );
    expect(res.status).toBe(404);
  });
});

describe("start failures (either transport)", () => {
  it("a revoked bot token fails start with a PlatformError naming SLACK_BOT_TOKEN", async () => {
    fake.revokeBotToken();
    const err = await startSlackAdapter(fake).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "platform_auth_failed", retryable: false });
    expect((err as Error).message).toContain("SLACK_BOT_TOKEN");
    expect((err as Error).message).toContain("token_revoked");
  });

  it("a token without chat:write fails start naming the scope", async () => {
    await fake.close();
    fake = await startFakeSlack({ scopes: ["app_mentions:read", "im:history"] });
    const err = await startSlackAdapter(fake).catch((e: unknown) => e);
    expect((err as Error).message).toContain("chat:write");
  });
});
