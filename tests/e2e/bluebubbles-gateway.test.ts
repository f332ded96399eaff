/**
 * iMessage (BlueBubbles) through the whole gateway: the fake BlueBubbles server (REST + webhook
 * events), the real adapter configured by env as an operator would, the real runner and the scripted
 * model.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createBlueBubblesAdapter } from "../../adapters/bluebubbles/index.js";
import { silentLogger } from "../../core/logger.js";
import type { InboundMessage } from "../../core/types.js";
import { memoryKv } from "../contracts/platform-drivers/memory-kv.js";
import {
  type BbSent,
  dmGuid,
  type FakeBlueBubbles,
  groupGuid,
  SERVER_PASSWORD,
  startFakeBlueBubbles,
} from "../fakes/bluebubbles/index.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN = "+15550000042";
const BOB = "bob@example.com";
const STRANGER = "+15550000099";
const FAMILY = groupGuid("family");

const { running, start } = gatewayPlatform<FakeBlueBubbles>({
  startFake: startFakeBlueBubbles,
  env: (fake) => ({
    BLUEBUBBLES_URL: fake.url,
    BLUEBUBBLES_PASSWORD: SERVER_PASSWORD,
    BLUEBUBBLES_PRIVATE_API: "true",
    BLUEBUBBLES_ALLOWED_USERS: `${ANN},${BOB}`,
  }),
  connect: (fake, h) => {
    fake.webhookUrl = `${h.apiUrl}/webhooks/bluebubbles?password=${SERVER_PASSWORD}`;
  },
});

const replies = (fake: FakeBlueBubbles, chat: string, count: number): Promise<BbSent[]> =>
  atLeast(() => fake.sentTo(chat), count, 10_000);

describe("bluebubbles through the gateway", () => {
  it("answers a DM with typing shown, and reports running", async () => {
    const { fake, h } = await start();
    expect((await fake.receive({ from: ANN, text: "Hello there" })).status).toBe(200);
    const [reply] = await replies(fake, dmGuid(ANN), 1);
    expect(reply).toMatchObject({ text: "echo: Hello there", method: "private-api" });
    expect(fake.calls.some((c) => c.path === `/api/v1/chat/${encodeURIComponent(dmGuid(ANN))}/typing`)).toBe(
      true,
    );
    const health = await gatewayHealth(h);
    expect(health.adapters["bluebubbles"]?.state).toBe("running");
  });

  it("in a group chat ignores chatter and answers when named; an email handle is a user too", async () => {
    const { fake, h } = await start();
    await fake.receive({ from: ANN, chat: FAMILY, text: "talking among ourselves" });
    await fake.receive({ from: BOB, chat: FAMILY, text: "Herald, what's the time?" });
    const [reply] = await replies(fake, FAMILY, 1);
    expect(reply!.text).toBe("echo: what's the time?");
    await h.gateway.runner.outbox.idle();
    expect(JSON.stringify(userTexts(h))).not.toContain("among ourselves");
    expect(h.llm.requests).toHaveLength(1);
  });

  it("skips its own messages, tapbacks and updated-message events", async () => {
    const { fake, h } = await start();
    await fake.receive({ from: ANN, text: "mine", extra: { isFromMe: true } });
    await fake.receive({
      from: ANN,
      text: "Loved “hi”",
      extra: { associatedMessageGuid: "p:0/ABC", associatedMessageType: "love" },
    });
    const { message } = await fake.receive({ from: ANN, text: "original", deliver: false });
    expect(await fake.post({ type: "updated-message", data: { ...message, dateRead: Date.now() } })).toBe(
      200,
    );
    await fake.receive({ from: ANN, text: "real one" });
    expect((await replies(fake, dmGuid(ANN), 1)).map((m) => m.text)).toEqual(["echo: real one"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(1);
  });

  it("gives an unknown sender a pairing code and no model call", async () => {
    const { fake, h } = await start();
    await fake.receive({ from: STRANGER, text: "hi" });
    expect((await replies(fake, dmGuid(STRANGER), 1))[0]!.text).toMatch(/pairing code is [A-Z0-9]+/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("an attachment sent in is downloaded for the model; a file sent out arrives as an attachment", async () => {
    const { fake, h } = await start();
    await fake.receive({
      from: ANN,
      text: "what is in this?",
      attachment: {
        name: "list.txt",
        mimeType: "text/plain",
        bytes: Buffer.from("Shopping list: apples, pears"),
      },
    });
    await replies(fake, dmGuid(ANN), 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.some((c) => c.path.endsWith("/download"))).toBe(true);

    const path = join(h.homeDir, "report.txt");
    writeFileSync(path, "the report");
    await h.gateway.adapters
      .get("bluebubbles")!
      .send(
        { platform: "bluebubbles", chatId: dmGuid(ANN) },
        { text: "Here it is", idempotencyKey: "file-out", files: [{ path, mimeType: "text/plain" }] },
      );
    const [text, file] = fake.sentTo(dmGuid(ANN)).slice(-2);
    expect(text!.text).toBe("Here it is");
    expect(file!.attachment).toMatchObject({ name: "report.txt", mimeType: "text/plain" });
    expect(file!.attachment!.bytes.toString()).toBe(readFileSync(path, "utf8"));
  });

  it("a reply refused with 429 (a proxy in front of the server) is sent once after the wait", async () => {
    const { fake, h } = await start();
    fake.fault("text", {
      status: 429,
      headers: { "Retry-After": "1" },
      body: { status: 429, message: "Too Many Requests" },
    });
    await fake.receive({ from: ANN, text: "busy?" });
    expect((await replies(fake, dmGuid(ANN), 1))[0]!.text).toBe("echo: busy?");
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(dmGuid(ANN))).toHaveLength(1);
    expect(fake.calls.filter((c) => c.path === "/api/v1/message/text")).toHaveLength(2);
  });

  it("a webhook without the password, or malformed, is refused and logged; the adapter goes on", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const { message } = await fake.receive({ from: ANN, text: "forged", deliver: false });
    expect(await fake.post({ type: "new-message", data: message }, `${h.apiUrl}/webhooks/bluebubbles`)).toBe(
      401,
    );
    expect(
      await fake.post(
        { type: "new-message", data: message },
        `${h.apiUrl}/webhooks/bluebubbles?password=guess`,
      ),
    ).toBe(401);
    expect(await fake.post("{not json")).toBe(400);
    expect(await fake.post({ type: "new-message", data: { guid: "x" } })).toBe(400);
    await fake.receive({ from: ANN, text: "still here" });
    await replies(fake, dmGuid(ANN), 1);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(dmGuid(ANN)).map((m) => m.text)).toEqual(["echo: still here"]);
    const log = lines.join("");
    expect(log).toContain("bluebubbles webhook without the server password; refused");
    expect(log).toContain("bluebubbles webhook body malformed; refused");
    expect(log).toContain("bluebubbles message malformed; skipped");
    expect(log).not.toContain(SERVER_PASSWORD);
  });

  it("messages sent while Herald was down are fetched and answered once at start", async () => {
    const { fake, h } = await start();
    await fake.receive({ from: ANN, text: "first" });
    await replies(fake, dmGuid(ANN), 1);
    await h.gateway.runner.outbox.idle();
    await h.crash();
    // The server could not reach Herald: the webhook was lost.
    await fake.receive({ from: ANN, text: "while you were away", deliver: false });
    await h.start();
    await replies(fake, dmGuid(ANN), 2);
    // The same message reaching the webhook late as well is still answered once.
    await fake.post({ type: "new-message", data: fake.messages.at(-1) });
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(dmGuid(ANN)).map((m) => m.text)).toEqual(["echo: first", "echo: while you were away"]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a wrong password fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeBlueBubbles());
    const h = await running.startHarness({
      env: { BLUEBUBBLES_URL: fake.url, BLUEBUBBLES_PASSWORD: "pw-wrong-4711" },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["bluebubbles"]?.state).toBe("failed");
    expect(health.adapters["bluebubbles"]?.detail).toMatch(/BLUEBUBBLES_PASSWORD.*BlueBubbles app/);
    expect(health.adapters["bluebubbles"]?.detail).not.toContain("pw-wrong-4711");
  });
});

describe("bluebubbles adapter catch-up", () => {
  it("a message whose webhook never came is fetched at the next catch-up and handed on once", async () => {
    const fake = running.trackFake(await startFakeBlueBubbles());
    const received: InboundMessage[] = [];
    const adapter = createBlueBubblesAdapter(
      { url: fake.url, password: SERVER_PASSWORD, catchUpIntervalMs: 100 },
      { logger: silentLogger(), homeDir: tmpdir(), cacheDir: tmpdir(), kv: memoryKv() },
    );
    const seen = new Set<string>();
    await adapter.start(async (m) => {
      if (seen.has(m.messageId)) return "duplicate";
      seen.add(m.messageId);
      received.push(m);
      return "accepted";
    });
    try {
      const hook = async (body: unknown) =>
        adapter.handleWebhook(
          new Request(`http://127.0.0.1/webhooks/bluebubbles?password=${SERVER_PASSWORD}`, {
            method: "POST",
            body: JSON.stringify(body),
          }),
        );
      const { message } = await fake.receive({ from: ANN, text: "first", deliver: false });
      expect((await hook({ type: "new-message", data: message })).status).toBe(200);
      await fake.receive({ from: ANN, text: "lost on the way", deliver: false });
      await vi.waitFor(() => expect(received.map((m) => m.text)).toEqual(["first", "lost on the way"]), {
        timeout: 5000,
      });
      expect(fake.calls.filter((c) => c.path === "/api/v1/message/query").length).toBeGreaterThanOrEqual(1);
    } finally {
      await adapter.stop();
    }
  });
});
