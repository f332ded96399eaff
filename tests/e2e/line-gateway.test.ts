/**
 * LINE through the whole gateway: the fake LINE platform (Messaging API + content API, signed webhook
 * deliveries), the real adapter configured by env as an operator would, the real runner and the
 * scripted model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import {
  CHANNEL_SECRET,
  CHANNEL_TOKEN,
  type FakeLine,
  type LineSent,
  lineId,
  startFakeLine,
} from "../fakes/line/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN = lineId("U", "ann");
const BOB = lineId("U", "bob");
const STRANGER = lineId("U", "stranger");
const GROUP = lineId("C", "family");
const PUBLIC = "https://herald.example.com";

const { running, start } = gatewayPlatform<FakeLine>({
  startFake: startFakeLine,
  prepare: (fake) => {
    for (const chat of [ANN, BOB, STRANGER, GROUP]) fake.chats.add(chat);
  },
  env: (fake) => ({
    LINE_CHANNEL_SECRET: CHANNEL_SECRET,
    LINE_CHANNEL_ACCESS_TOKEN: CHANNEL_TOKEN,
    LINE_API_URL: fake.url,
    LINE_DATA_URL: fake.url,
    LINE_PUBLIC_URL: PUBLIC,
    LINE_ALLOWED_USERS: `${ANN},${BOB}`,
  }),
  connect: (fake, h) => {
    fake.webhookUrl = `${h.apiUrl}/webhooks/line`;
  },
});

const replies = (fake: FakeLine, chat: string, count: number): Promise<LineSent[]> =>
  atLeast(() => fake.sentTo(chat), count, 10_000);

describe("line through the gateway", () => {
  it("answers a DM with the reply token, shows the loading animation, and reports running", async () => {
    const { fake, h } = await start();
    const delivered = await fake.text({ from: ANN, text: "Hello there" });
    expect(delivered.status).toBe(200);
    const [reply] = await replies(fake, ANN, 1);
    expect(reply).toMatchObject({ via: "reply", text: "echo: Hello there" });
    expect(fake.calls.some((c) => c.route === "loading" && JSON.stringify(c.body).includes(ANN))).toBe(true);
    const health = await gatewayHealth(h);
    expect(health.adapters["line"]?.state).toBe("running");
  });

  it("a long reply uses the reply token once, then pushes the rest with retry keys", async () => {
    const { fake, h } = await start();
    const long = Array.from({ length: 1400 }, (_, i) => `word${i}`).join(" ");
    h.llm.script({ text: long });
    await fake.text({ from: ANN, text: "tell me everything" });
    await replies(fake, ANN, 3);
    await h.gateway.runner.outbox.idle();
    const sent = fake.sentTo(ANN);
    expect(sent.map((s) => s.via)).toEqual(["reply", "push", "push"]);
    expect(
      sent
        .map((s) => s.text)
        .join(" ")
        .split(" "),
    ).toEqual(long.split(" "));
    expect(
      fake.calls
        .filter((c) => c.route === "push")
        .every((c) => /^[0-9a-f-]{36}$/.test(String(c.headers["x-line-retry-key"]))),
    ).toBe(true);
  });

  it("in a group ignores chatter and answers a mention, without the mention in the text", async () => {
    const { fake, h } = await start();
    await fake.text({ from: ANN, group: GROUP, text: "talking among ourselves" });
    await fake.text({ from: BOB, group: GROUP, text: "what's the time?", mention: true });
    const [reply] = await replies(fake, GROUP, 1);
    expect(reply!.text).toBe("echo: what's the time?");
    await h.gateway.runner.outbox.idle();
    expect(JSON.stringify(userTexts(h))).not.toContain("among ourselves");
    expect(h.llm.requests).toHaveLength(1);
  });

  it("gives an unknown user a pairing code and no model call", async () => {
    const { fake, h } = await start();
    await fake.text({ from: STRANGER, text: "hi" });
    expect((await replies(fake, STRANGER, 1))[0]!.text).toMatch(/pairing code is [A-Z0-9]+/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("a file sent in reaches the model through the content API; a file sent out is served from the public URL", async () => {
    const { fake, h } = await start();
    await fake.file({
      from: ANN,
      kind: "file",
      fileName: "list.txt",
      mimeType: "text/plain",
      bytes: Buffer.from("Shopping list: apples, pears"),
    });
    await replies(fake, ANN, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.some((c) => c.route === "content")).toBe(true);

    const adapter = h.gateway.adapters.get("line")!;
    const photo = join(h.homeDir, "photo.png");
    const report = join(h.homeDir, "report.txt");
    writeFileSync(photo, "png bytes");
    writeFileSync(report, "the report");
    await adapter.send(
      { platform: "line", chatId: ANN },
      {
        text: "Here they are",
        idempotencyKey: "files-out",
        files: [
          { path: photo, mimeType: "image/png" },
          { path: report, mimeType: "text/plain" },
        ],
      },
    );
    const [text, image, card] = fake.sentTo(ANN).slice(-3);
    expect(text!.text).toBe("Here they are");
    expect(image!.message["type"]).toBe("image");
    const imageUrl = String(image!.message["originalContentUrl"]);
    expect(imageUrl.startsWith(`${PUBLIC}/webhooks/line/media/`)).toBe(true);
    // LINE fetches the URL; here the same path on the gateway's own address.
    const served = await fetch(imageUrl.replace(PUBLIC, h.apiUrl));
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(await served.text()).toBe("png bytes");
    expect(card!.message["type"]).toBe("flex");
    expect(card!.text).toBe("📎 report.txt");
    expect((await fetch(`${h.apiUrl}/webhooks/line/media/not-a-real-id`)).status).toBe(404);
  });

  it("an approval prompt has quick-reply buttons; a tap (postback) approves and the command runs once", async () => {
    const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";
    const { fake, h } = await start({ HERALD_EXEC_BACKEND: "local", HERALD_EXEC_GROUPS: "true" });
    h.llm.setDefault((request: FakeLlmRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
    });
    await fake.text({ from: ANN, text: "tidy" });
    await vi.waitFor(() => expect(fake.sentTo(ANN).some((s) => s.message["quickReply"])).toBe(true), {
      timeout: 15_000,
    });
    const prompt = fake.sentTo(ANN).find((s) => s.message["quickReply"])!;
    expect(prompt.text).toContain("needs your approval");
    const items = (prompt.message["quickReply"] as { items: { action: { label: string; data: string } }[] })
      .items;
    expect(items.map((i) => i.action.label)).toEqual(["✅ Approve", "♾️ Always", "❌ Deny"]);
    await fake.postback({ from: ANN, data: items[0]!.action.data });
    await vi.waitFor(() => expect(fake.sentTo(ANN).at(-1)?.text).toMatch(/tool said:[\s\S]*approved-run/), {
      timeout: 15_000,
    });
    expect(
      fake
        .sentTo(ANN)
        .at(-1)!
        .text.match(/approved-run/g),
    ).toHaveLength(1);
  });

  it("a reply refused with 429 is sent once, by push, after the outbox waits", async () => {
    const { fake, h } = await start();
    fake.fault("reply", {
      status: 429,
      body: { message: "The API rate limit has been exceeded. Try again later." },
    });
    await fake.text({ from: ANN, text: "busy?" });
    const [reply] = await replies(fake, ANN, 1);
    await h.gateway.runner.outbox.idle();
    expect(reply).toMatchObject({ via: "push", text: "echo: busy?" });
    expect(fake.sentTo(ANN)).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("a badly signed or malformed delivery is refused and logged; the adapter goes on", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const body = JSON.stringify({ destination: "x", events: [] });
    expect((await fake.deliver([], { body, signature: "bm90LXRoZS1zaWduYXR1cmU=" })).status).toBe(401);
    expect((await fake.deliver([], { body: "{not json" })).status).toBe(400);
    // One malformed event beside a good one: the good one is still handled.
    const good = await fake.text({ from: BOB, text: "still here" });
    expect(good.status).toBe(200);
    expect((await fake.deliver([{ type: "message", webhookEventId: "e1" }, good.event])).status).toBe(200);
    await replies(fake, BOB, 1);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(BOB)).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("line webhook signature invalid; refused");
    expect(log).toContain("line webhook body malformed; refused");
    expect(log).toContain("line event malformed; skipped");
    expect(log).not.toContain(CHANNEL_TOKEN);
    expect(log).not.toContain(CHANNEL_SECRET);
  });

  it("a redelivered event after a restart is answered once; new messages after it are answered", async () => {
    const { fake, h } = await start();
    const first = await fake.text({ from: ANN, text: "first" });
    await replies(fake, ANN, 1);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    const again = { ...first.event, deliveryContext: { isRedelivery: true } };
    expect((await fake.deliver([again])).status).toBe(200);
    await fake.text({ from: ANN, text: "second" });
    await replies(fake, ANN, 2);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(ANN).map((s) => s.text)).toEqual(["echo: first", "echo: second"]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a reply pending when the gateway crashed is delivered after the start, by push once the token is stale", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "slow answer", delayMs: 1500 });
    await fake.text({ from: ANN, text: "take your time" });
    await vi.waitFor(() => expect(h.llm.requests).toHaveLength(1));
    await h.crash();
    fake.replyTokenTtlMs = 0;
    await h.start();
    await replies(fake, ANN, 1);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(ANN)).toHaveLength(1);
    expect(fake.sentTo(ANN)[0]).toMatchObject({ via: "push" });
  });

  it("a revoked token fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeLine());
    const h = await running.startHarness({
      env: {
        LINE_CHANNEL_SECRET: CHANNEL_SECRET,
        LINE_CHANNEL_ACCESS_TOKEN: "tok-revoked-4711",
        LINE_API_URL: fake.url,
      },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["line"]?.state).toBe("failed");
    expect(health.adapters["line"]?.detail).toMatch(/LINE_CHANNEL_ACCESS_TOKEN.*LINE Developers console/);
    expect(health.adapters["line"]?.detail).not.toContain("tok-revoked-4711");
  });
});
