/**
 * Telegram through the whole gateway when things go wrong: 429s, rejected markup, a crash mid-turn, a bad
 * token; plus media in and the webhook served by the gateway's own HTTP server.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { freePort } from "../helpers/net.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, fixture, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

const start = (env: Record<string, string> = {}) => startTelegramGateway(running, env);

describe("telegram through the gateway: faults", () => {
  it("a 429 on one chat delays only that chat; its reply still arrives, once", async () => {
    const { fake, h } = await start();
    fake.fault("sendMessage", { status: 429, retryAfter: 1, chatId: 111 });
    fake.userSends({ chatId: 111, fromId: 111, text: "first in" });
    // The first turn of a fresh gateway may take over a second on a loaded host.
    await vi.waitFor(() => expect(fake!.callsTo("sendMessage", 111)).toHaveLength(1), { timeout: 5_000 });
    fake.userSends({ chatId: 222, fromId: 222, text: "second in" });
    expect(await botReplies(fake, 222, 1)).toEqual(["echo: second in"]);
    // Chat 222 was answered while chat 111 still waited out its retry_after.
    expect(fake.botMessages(111)).toHaveLength(0);
    expect(await botReplies(fake, 111, 1)).toEqual(["echo: first in"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.callsTo("sendMessage", 111).map((c) => c.status)).toEqual([429, 200]);
    const [limited, retried] = fake.callsTo("sendMessage", 111);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(900);
  });

  it("when Telegram rejects the markup, the answer goes out once as plain text", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "**Bold** claim" });
    fake.fault("sendMessage", {
      status: 400,
      description: "Bad Request: can't parse entities: Unexpected end tag at byte offset 9",
      when: (p) => p["parse_mode"] === "HTML",
    });
    fake.userSends({ chatId: 111, fromId: 111, text: "go" });
    expect(await botReplies(fake, 111, 1)).toEqual(["**Bold** claim"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.callsTo("sendMessage").map((c) => c.status)).toEqual([400, 200]);
  });

  it("a gateway killed between receiving and replying answers exactly once after restart", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "first attempt", delayMs: 20_000 });
    fake.userSends({ chatId: 111, fromId: 111, text: "are you there?" });
    await h.llm.waitForRequests(1);
    await h.crash();
    h.llm.script({ text: "the answer" });
    await h.start();
    expect(await botReplies(fake, 111, 1)).toEqual(["the answer"]);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessages(111).map((m) => m.text)).toEqual(["the answer"]);
    expect(fake.pendingUpdates()).toBe(0);
  });

  it("a bad token fails the Telegram adapter clearly while the rest of the gateway runs", async () => {
    const fake = running.trackFake(await startFakeTelegram());
    const harness = await running.startHarness({
      env: { TELEGRAM_BOT_TOKEN: "123:revoked", TELEGRAM_API_ROOT: fake.url, TELEGRAM_ALLOWED_USERS: "111" },
    });
    expect(harness.gateway.failed.get("telegram")).toMatch(
      /TELEGRAM_BOT_TOKEN is set but getMe answered 401.*@BotFather/,
    );
    const health = (await (await fetch(`${harness.apiUrl}/health`)).json()) as {
      status: string;
      adapters: Record<string, { state: string }>;
    };
    expect(health.status).toBe("ok");
    expect(health.adapters["telegram"]?.state).toBe("failed");
  });

  it("passes a photo to the model as an image (vision) and a document as a file note at its workspace path", async () => {
    const { fake, h } = await start({ HERALD_MODEL_VISION: "true" });
    const photo = fake.addFile(Buffer.from("JPEGDATA"), "photos/p.jpg");
    const update = await fixture("private-photo");
    (update["message"] as Record<string, unknown>)["photo"] = [{ ...photo, width: 100, height: 100 }];
    fake.pushUpdate(update);
    await botReplies(fake, 111, 1);
    const content = h.llm.requests[0]!.messages.at(-1)!.content as {
      type: string;
      image_url?: { url: string };
    }[];
    expect(content).toContainEqual({
      type: "image_url",
      image_url: { url: `data:image/jpeg;base64,${Buffer.from("JPEGDATA").toString("base64")}` },
    });

    const doc = fake.addFile("%PDF", "documents/d.pdf");
    const docUpdate = await fixture("private-document");
    (docUpdate["message"] as Record<string, unknown>)["document"] = {
      ...doc,
      file_name: "notes.pdf",
      mime_type: "application/pdf",
    };
    fake.pushUpdate(docUpdate);
    await botReplies(fake, 111, 2);
    expect(JSON.stringify(h.llm.requests[1]!.messages.at(-1))).toMatch(
      /Summarise please.*\[attached file: notes\.pdf, application\/pdf, \/workspace\/attachments\/notes\.pdf\]/,
    );
  });

  it("receives by webhook on the gateway's HTTP server, and refuses a wrong secret", async () => {
    const port = await freePort();
    const hook = `http://127.0.0.1:${port}/webhooks/telegram`;
    const { fake } = await start({
      API_SERVER_PORT: String(port),
      TELEGRAM_WEBHOOK_URL: hook,
      TELEGRAM_WEBHOOK_SECRET: "hook-secret",
    });
    expect(fake.webhook()).toEqual({ url: hook, secretToken: "hook-secret" });
    const forged = await fetch(hook, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "nope" },
      body: JSON.stringify({
        update_id: 1,
        message: fake.userMessage({ chatId: 111, fromId: 111, text: "forged" }),
      }),
    });
    expect(forged.status).toBe(401);
    expect(
      await fake.deliverWebhook({
        update_id: 2,
        message: fake.userMessage({ chatId: 111, fromId: 111, text: "real" }),
      }),
    ).toBe(200);
    expect(await botReplies(fake, 111, 1)).toEqual(["echo: real"]);
    expect(fake.callsTo("getUpdates")).toHaveLength(0);
  });
});
