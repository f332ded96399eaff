/**
 * Signal through the whole gateway: the fake signal-cli daemon (JSON-RPC + SSE), the real adapter
 * configured by env as an operator would, the real runner and the scripted model.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { BOT_NUMBER, BOT_UUID, type FakeSignal, startFakeSignal } from "../fakes/signal/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";

const ANN = "+4915100000002";
const BOB = "+4915100000003";
const STRANGER = "+4915100000099";
const GROUP = "R3JvdXBJZEZvckhlcmFsZFRlc3RzMDEyMzQ1Njc4OTA=";

const running = platformPerTest<FakeSignal>();

async function start(env: Record<string, string> = {}): Promise<{ fake: FakeSignal; h: Harness }> {
  const fake = running.fake ?? running.trackFake(await startFakeSignal());
  fake.groups = [{ id: GROUP, name: "Team", members: [ANN, BOB, BOT_NUMBER] }];
  const h = await running.startHarness({
    env: {
      SIGNAL_ACCOUNT: BOT_NUMBER,
      SIGNAL_ACCOUNT_UUID: BOT_UUID,
      SIGNAL_HTTP_URL: fake.url,
      SIGNAL_ALLOWED_USERS: `${ANN},${BOB}`,
      ...env,
    },
  });
  await vi.waitFor(() => expect(fake.streams.length).toBeGreaterThan(0));
  return { fake, h };
}

async function replies(fake: FakeSignal, chat: string, count: number): Promise<string[]> {
  await vi.waitFor(() => expect(fake.sentTo(chat).length).toBeGreaterThanOrEqual(count), { timeout: 10_000 });
  return fake.sentTo(chat).map((m) => m.text);
}

const userTexts = (h: Harness) =>
  h.llm.requests.map((r) => String(r.messages.filter((m) => m.role === "user").at(-1)?.content ?? ""));

describe("signal through the gateway", () => {
  it("answers a DM once, with typing shown and a working reaction that is removed after the reply", async () => {
    const { fake, h } = await start();
    const sentAt = fake.receive({ from: ANN, text: "Hello there" });
    expect(await replies(fake, ANN, 1)).toEqual(["echo: Hello there"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(ANN)).toHaveLength(1);
    // No quote in a DM.
    expect(fake.sentTo(ANN)[0]!.quote).toBeUndefined();
    expect(fake.calls.some((c) => c.method === "sendTyping" && JSON.stringify(c.params).includes(ANN))).toBe(
      true,
    );
    const reactions = fake.calls.filter((c) => c.method === "sendReaction");
    expect(
      reactions.map((c) => [c.params["emoji"], c.params["targetTimestamp"], c.params["remove"]]),
    ).toEqual([
      ["👀", sentAt, false],
      ["👀", sentAt, true],
    ]);
    expect(h.gateway.adapters.get("signal")?.status?.().state).toBe("running");
    const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
      adapters: Record<string, { state: string }>;
    };
    expect(health.adapters["signal"]?.state).toBe("running");
  });

  it("a signal-cli that does not answer fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeSignal());
    await fake.close();
    const h = await running.startHarness({ env: { SIGNAL_ACCOUNT: BOT_NUMBER, SIGNAL_HTTP_URL: fake.url } });
    const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
      adapters: Record<string, { state: string; detail?: string }>;
    };
    expect(health.adapters["signal"]?.state).toBe("failed");
    expect(health.adapters["signal"]?.detail).toMatch(/signal-cli -a \+4915100000001 daemon --http/);
  });

  it("in a group answers a mention (quoting it) and a reply to the bot, and ignores other chatter", async () => {
    const { fake, h } = await start();
    const chat = `group.${GROUP}`;
    fake.receive({ from: ANN, groupId: GROUP, text: "talking among ourselves" });
    const asked = fake.receive({
      from: ANN,
      groupId: GROUP,
      text: "\uFFFC what's the time?",
      mentions: [{ number: BOT_NUMBER, uuid: BOT_UUID, name: "Herald", start: 0, length: 1 }],
    });
    expect(await replies(fake, chat, 1)).toEqual(["echo: what's the time?"]);
    expect(fake.sentTo(chat)[0]!.quote).toEqual({ timestamp: asked, author: ANN });
    const answer = fake.sentTo(chat)[0]!;
    fake.receive({
      from: BOB,
      groupId: GROUP,
      text: "and tomorrow?",
      quote: { id: answer.timestamp, author: BOT_NUMBER },
    });
    expect(await replies(fake, chat, 2)).toEqual(["echo: what's the time?", "echo: and tomorrow?"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(chat)).toHaveLength(2);
    expect(JSON.stringify(userTexts(h))).not.toContain("among ourselves");
  });

  it("answers group messages without a mention when SIGNAL_REQUIRE_MENTION=false", async () => {
    const { fake } = await start({ SIGNAL_REQUIRE_MENTION: "false" });
    fake.receive({ from: ANN, groupId: GROUP, text: "anyone?" });
    expect(await replies(fake, `group.${GROUP}`, 1)).toEqual(["echo: anyone?"]);
  });

  it("sends Markdown emphasis and code as Signal text styles", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "**Done**: run `npm test`, *then* relax" });
    fake.receive({ from: ANN, text: "status?" });
    await replies(fake, ANN, 1);
    const sent = fake.sentTo(ANN)[0]!;
    expect(sent.text).toBe("Done: run npm test, then relax");
    expect(sent.styles).toEqual(["0:4:BOLD", "10:8:MONOSPACE", "20:4:ITALIC"]);
  });

  it("gives an unknown user a pairing code and no model call", async () => {
    const { fake, h } = await start();
    fake.receive({ from: STRANGER, text: "hi" });
    expect((await replies(fake, STRANGER, 1))[0]).toMatch(/pairing code is [A-Z0-9]+/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("a file sent in reaches the model through getAttachment; a file sent out goes as a data URI", async () => {
    const { fake, h } = await start();
    fake.attachments.set("att-1", Buffer.from("Shopping list: apples, pears"));
    fake.receive({
      from: ANN,
      text: "what is in this?",
      attachments: [{ id: "att-1", contentType: "text/plain", filename: "list.txt", size: 28 }],
    });
    await replies(fake, ANN, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.find((c) => c.method === "getAttachment")?.params["id"]).toBe("att-1");

    const path = join(h.homeDir, "report.txt");
    writeFileSync(path, "the report");
    const adapter = h.gateway.adapters.get("signal")!;
    await adapter.send(
      { platform: "signal", chatId: ANN },
      { text: "Here it is", idempotencyKey: "file-out", files: [{ path, mimeType: "text/plain" }] },
    );
    const out = fake.sentTo(ANN).at(-1)!;
    expect(out.text).toBe("Here it is");
    expect(out.attachments).toEqual([
      `data:text/plain;filename=report.txt;base64,${Buffer.from(readFileSync(path)).toString("base64")}`,
    ]);
  });

  it("a duplicate delivery is answered once, and a restart resumes after the last event without replays", async () => {
    const { fake, h } = await start();
    const at = fake.receive({ from: ANN, text: "first" });
    await replies(fake, ANN, 1);
    // The same message again (signal-cli redelivers after a reconnect with an unknown event id).
    fake.receive({ from: ANN, text: "first", timestamp: at });
    fake.dropStreams();
    await vi.waitFor(() => expect(fake.streams.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    fake.receive({ from: ANN, text: "second" });
    expect(await replies(fake, ANN, 2)).toEqual(["echo: first", "echo: second"]);

    await h.restart();
    await vi.waitFor(() => expect(fake.streams.length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    // The new process resumed from the last handled event id.
    expect(fake.streams.at(-1)).toBe("3");
    fake.receive({ from: ANN, text: "third" });
    expect(await replies(fake, ANN, 3)).toEqual(["echo: first", "echo: second", "echo: third"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.sentTo(ANN)).toHaveLength(3);
    expect(h.llm.requests).toHaveLength(3);
  });
});
