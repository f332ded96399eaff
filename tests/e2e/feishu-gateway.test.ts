/**
 * Feishu / Lark through the whole gateway: the fake Open API (tokens, messages, resources, uploads)
 * driven by the real SDK Client inside the adapter, events pushed encrypted and signed to
 * `/webhooks/feishu` on the gateway's HTTP server, the real runner and the scripted model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import {
  APP_ID,
  APP_SECRET,
  cardActionEvent,
  ENCRYPT_KEY,
  envelope,
  type FakeFeishu,
  messageEvent,
  startFakeFeishu,
  type UserMessage,
  VERIFICATION_TOKEN,
} from "../fakes/feishu/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN = "ou_ann00000000000000000000000000001";
const BOB = "ou_bob00000000000000000000000000002";
const DM = "oc_dm0000000000000000000000000000ann";
const TEAM = "oc_team00000000000000000000000000001";

const { running, start } = gatewayPlatform<FakeFeishu>({
  startFake: startFakeFeishu,
  prepare: (fake) => {
    fake.addChat(DM);
    fake.addChat(TEAM);
  },
  env: (fake) => ({
    FEISHU_APP_ID: APP_ID,
    FEISHU_APP_SECRET: APP_SECRET,
    FEISHU_ENCRYPT_KEY: ENCRYPT_KEY,
    FEISHU_VERIFICATION_TOKEN: VERIFICATION_TOKEN,
    FEISHU_API_URL: fake.url,
    FEISHU_ALLOWED_USERS: `${ANN},${BOB}`,
  }),
});

const hook = (h: Harness) => `${h.apiUrl}/webhooks/feishu`;

async function say(fake: FakeFeishu, h: Harness, m: UserMessage): Promise<string> {
  const { messageId, event } = messageEvent(m);
  const res = await fake.push(hook(h), envelope("im.message.receive_v1", event));
  expect(res.status).toBe(200);
  return messageId;
}

async function replies(fake: FakeFeishu, chat: string, count: number): Promise<string[]> {
  return (await atLeast(() => fake.botTextsIn(chat), count)).map((m) => m.text);
}

describe("feishu through the gateway", () => {
  it("answers the URL check, a DM, and a group mention (quoted, mention removed); ignores chatter", async () => {
    const { fake, h } = await start({ FEISHU_STREAM: "off" });
    const check = await fake.push(hook(h), {
      type: "url_verification",
      challenge: "ch-4711",
      token: VERIFICATION_TOKEN,
    });
    expect(JSON.parse(check.body)).toEqual({ challenge: "ch-4711" });

    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "Hello there" });
    expect(await replies(fake, DM, 1)).toEqual(["echo: Hello there"]);

    await say(fake, h, { from: BOB, chatId: TEAM, chatType: "group", text: "talking among ourselves" });
    const asked = await say(fake, h, {
      from: BOB,
      chatId: TEAM,
      chatType: "group",
      text: "what's the time?",
      mentionBot: true,
    });
    expect(await replies(fake, TEAM, 1)).toEqual(["echo: what's the time?"]);
    expect(fake.messages.find((m) => m.chat_id === TEAM && m.fromBot)?.replyTo).toBe(asked);
    await h.gateway.runner.outbox.idle();
    expect(JSON.stringify(userTexts(h))).not.toContain("among ourselves");
    // One tenant token served every call.
    expect(fake.tokensIssued).toBe(1);
    const health = await gatewayHealth(h);
    expect(health.adapters["feishu"]?.state).toBe("running");
  });

  it("streams a reply into one card patched in place", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "A streamed answer, long enough to arrive in several pieces of text." });
    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "stream please" });
    await vi.waitFor(
      () =>
        expect(fake.botTextsIn(DM).map((m) => m.text)).toEqual([
          "A streamed answer, long enough to arrive in several pieces of text.",
        ]),
      { timeout: 15_000 },
    );
    await h.gateway.runner.outbox.idle();
    expect(fake.botTextsIn(DM)).toHaveLength(1);
  });

  it("a file sent in reaches the model from the message resource; a file sent out is uploaded", async () => {
    const { fake, h } = await start();
    const { messageId, event } = messageEvent({
      from: ANN,
      chatId: DM,
      chatType: "p2p",
      messageType: "file",
      content: { file_key: "file_v3_list", file_name: "list.txt" },
    });
    fake.addResource(messageId, "file_v3_list", Buffer.from("Shopping list: apples, pears"), "text/plain");
    expect((await fake.push(hook(h), envelope("im.message.receive_v1", event))).status).toBe(200);
    await replies(fake, DM, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.some((c) => c.path === `im/v1/messages/${messageId}/resources/file_v3_list`)).toBe(
      true,
    );

    const path = join(h.homeDir, "report.txt");
    writeFileSync(path, "the report");
    await h.gateway.adapters
      .get("feishu")!
      .send(
        { platform: "feishu", chatId: DM },
        { text: "Here it is", idempotencyKey: "file-out", files: [{ path, mimeType: "text/plain" }] },
      );
    const sent = fake.messages.filter((m) => m.fromBot && m.chat_id === DM && m.msg_type === "file");
    expect(sent).toHaveLength(1);
    const key = (JSON.parse(sent[0]!.content) as { file_key: string }).file_key;
    expect(fake.uploads.get(key)).toMatchObject({ name: "report.txt", kind: "file" });
    expect(fake.uploads.get(key)!.bytes.toString()).toBe("the report");

    const png = join(h.homeDir, "chart.png");
    writeFileSync(png, Buffer.from("89504e470d0a1a0a", "hex"));
    await h.gateway.adapters
      .get("feishu")!
      .send(
        { platform: "feishu", chatId: DM },
        { text: "", idempotencyKey: "img-out", files: [{ path: png, mimeType: "image/png" }] },
      );
    const image = fake.messages.find((m) => m.fromBot && m.msg_type === "image")!;
    expect(fake.messages.at(-1)).toBe(image);
    expect(fake.messages.at(-2)?.msg_type).toBe("file");
    const imageKey = (JSON.parse(image.content) as { image_key: string }).image_key;
    expect(fake.uploads.get(imageKey)).toMatchObject({ kind: "image" });
    expect(fake.uploads.get(imageKey)!.bytes.toString("hex")).toBe("89504e470d0a1a0a");
  });

  it("an approval card's button click reaches the runner as the clicker's /approve; the card is marked", async () => {
    const { fake, h } = await start({ HERALD_EXEC_BACKEND: "local", HERALD_EXEC_GROUPS: "true" });
    const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run";
    h.llm.setDefault((req: FakeLlmRequest) => {
      const last = req.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
    });
    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "tidy" });
    await vi.waitFor(
      () => expect(fake.messages.some((m) => m.content.includes('"tag":"action"'))).toBe(true),
      { timeout: 15_000 },
    );
    const prompt = fake.messages.find((m) => m.content.includes('"tag":"action"'))!;
    const card = JSON.parse(prompt.content) as {
      elements: { tag: string; actions?: { text: { content: string }; value: unknown }[] }[];
    };
    const approve = card.elements
      .find((e) => e.tag === "action")!
      .actions!.find((a) => a.text.content.includes("Approve"))!;
    const click = envelope("card.action.trigger", cardActionEvent(ANN, DM, prompt.message_id, approve.value));
    expect((await fake.push(hook(h), click)).status).toBe(200);
    await vi.waitFor(
      () => expect(fake.botTextsIn(DM).at(-1)?.text).toMatch(/tool said:[\s\S]*approved-run/),
      { timeout: 15_000 },
    );
    await vi.waitFor(() => expect(fake.textOf(prompt.message_id)).toMatch(/✓ ✅ Approve$/));
    expect(fake.messages.find((m) => m.message_id === prompt.message_id)!.content).not.toContain(
      '"tag":"action"',
    );
    // The same click redelivered is the same message: nothing runs again.
    expect((await fake.push(hook(h), click)).status).toBe(200);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });

  it("a reply refused with 429 (99991400) is sent once after the wait it names; an expired token is refreshed", async () => {
    const { fake, h } = await start({ FEISHU_STREAM: "off" });
    fake.fault("POST messages", {
      status: 429,
      body: { code: 99991400, msg: "request trigger frequency limit" },
      headers: { "x-ogw-ratelimit-reset": "1" },
    });
    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "busy?" });
    expect(await replies(fake, DM, 1)).toEqual(["echo: busy?"]);
    expect(fake.calls.filter((c) => c.method === "POST" && c.path === "im/v1/messages")).toHaveLength(2);

    fake.expireTokens();
    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "still there?" });
    expect(await replies(fake, DM, 2)).toEqual(["echo: busy?", "echo: still there?"]);
    expect(fake.tokensIssued).toBe(2);
  });

  it("refuses forged, unsigned, stale and wrong-token requests and logs malformed events; the next message is answered", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({ FEISHU_STREAM: "off" }, lines);
    const { event } = messageEvent({ from: ANN, chatId: DM, chatType: "p2p", text: "forged" });
    const payload = envelope("im.message.receive_v1", event);
    expect((await fake.push(hook(h), payload, { signKey: "not-the-key" })).status).toBe(401);
    expect((await fake.push(hook(h), payload, { unsigned: true })).status).toBe(401);
    expect(
      (await fake.push(hook(h), payload, { timestampSec: Math.floor(Date.now() / 1000) - 3600 })).status,
    ).toBe(401);
    expect((await fake.push(hook(h), envelope("im.message.receive_v1", event, "wrong-token"))).status).toBe(
      401,
    );
    expect((await fake.push(hook(h), payload, { encryptKey: "another-key" })).status).toBe(400);
    const bad = await fetch(hook(h), { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    const malformed = envelope("im.message.receive_v1", {
      sender: { sender_id: { open_id: ANN } },
      message: { message_id: "om_x", chat_id: DM, chat_type: "p2p", message_type: "text", content: "{oops" },
    });
    expect((await fake.push(hook(h), malformed)).status).toBe(200);

    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "the real one" });
    expect(await replies(fake, DM, 1)).toEqual(["echo: the real one"]);
    expect(h.llm.requests).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("feishu request refused");
    expect(log).toContain("X-Lark-Signature does not match");
    expect(log).toContain("feishu event malformed; skipped");
    for (const secret of [APP_SECRET, ENCRYPT_KEY, VERIFICATION_TOKEN]) expect(log).not.toContain(secret);
  });

  it("a redelivered event after a restart is answered once; a new one is answered; an unknown user gets a pairing code", async () => {
    const { fake, h } = await start({ FEISHU_STREAM: "off" });
    const first = messageEvent({ from: ANN, chatId: DM, chatType: "p2p", text: "first" });
    const payload = envelope("im.message.receive_v1", first.event);
    await fake.push(hook(h), payload);
    await replies(fake, DM, 1);
    await h.restart();
    expect((await fake.push(hook(h), payload)).status).toBe(200);
    await say(fake, h, { from: ANN, chatId: DM, chatType: "p2p", text: "second" });
    expect(await replies(fake, DM, 2)).toEqual(["echo: first", "echo: second"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(2);

    const STRANGER_DM = "oc_dm00000000000000000000000stranger";
    fake.addChat(STRANGER_DM);
    await say(fake, h, {
      from: "ou_stranger0000000000000000000009",
      chatId: STRANGER_DM,
      chatType: "p2p",
      text: "hi",
    });
    expect((await replies(fake, STRANGER_DM, 1))[0]).toMatch(/pairing code/);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a refused App Secret fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeFeishu());
    const h = await running.startHarness({
      env: {
        FEISHU_APP_ID: APP_ID,
        FEISHU_APP_SECRET: "wrong-secret-4711",
        FEISHU_ENCRYPT_KEY: ENCRYPT_KEY,
        FEISHU_VERIFICATION_TOKEN: VERIFICATION_TOKEN,
        FEISHU_API_URL: fake.url,
      },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["feishu"]?.state).toBe("failed");
    expect(health.adapters["feishu"]?.detail).toMatch(/FEISHU_APP_SECRET/);
    expect(health.adapters["feishu"]?.detail).not.toContain("wrong-secret-4711");
  });
});
