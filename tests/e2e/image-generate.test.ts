/**
 * `image_generate` through the whole gateway against the fake images server (real PNG bytes): the
 * scripted model asks for a picture, the image is saved in the conversation's workspace (through the
 * sandbox's files where bubblewrap runs) and arrives as a Telegram photo, a Discord upload and a Slack
 * file upload; `/usage` lists the images model's tokens.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type FakeDiscord, IDS, startFakeDiscord } from "../fakes/discord/index.js";
import { type FakeImages, pngSize, startFakeImages } from "../fakes/images/index.js";
import {
  eventCallback,
  type FakeSlack,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { SIGNING_SECRET } from "./slack-helpers.js";
import { botSays, startTelegramGateway } from "./telegram-helpers.js";

let images: FakeImages | undefined;
afterEach(async () => {
  await images?.close();
  images = undefined;
});

async function imagesEnv(): Promise<Record<string, string>> {
  images = await startFakeImages({ apiKey: "sk-img" });
  return {
    HERALD_IMAGES_URL: images.baseUrl,
    HERALD_IMAGES_KEY: "sk-img",
    HERALD_IMAGES_MODEL: "gpt-image-1",
  };
}

const draw = (prompt: string, extra: Record<string, unknown> = {}) => ({
  toolCalls: [{ name: "image_generate", arguments: { prompt, ...extra } }],
});

describe("image_generate on Telegram", () => {
  const running = platformPerTest<FakeTelegram>();

  it("sends the picture as a photo with the reply, keeps it in the workspace, and /usage lists it", async () => {
    running.trackFake(await startFakeTelegram());
    const { fake, h } = await startTelegramGateway(running, await imagesEnv());
    h.llm.script(draw("a lighthouse at dusk", { size: "256x256" }), { text: "Here is your lighthouse." });
    fake.userSends({ chatId: 111, fromId: 111, text: "draw me a lighthouse" });
    await vi.waitFor(() => expect(fake.callsTo("sendPhoto", 111)).toHaveLength(1), { timeout: 20_000 });
    await botSays(fake, 111, "Here is your lighthouse.");
    const photo = Object.values(fake.callsTo("sendPhoto", 111)[0]!.files)[0]!;
    expect(pngSize(photo.content)).toEqual({ width: 256, height: 256 });
    expect(images?.generations[0]).toMatchObject({
      model: "gpt-image-1",
      prompt: "a lighthouse at dusk",
      n: 1,
      size: "256x256",
      authorization: "Bearer sk-img",
    });
    // The model was told where the image is in the workspace; a command there sees the same file.
    const toolResult = String(h.llm.requests[1]!.messages.find((m) => m.role === "tool")?.content);
    const shown = /\d\. (\S+\.png)/.exec(toolResult)?.[1] ?? "";
    expect(shown).toMatch(/images\/\d{8}-\d{6}-a-lighthouse-at-dusk\.png$/);
    h.llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: `wc -c < ${shown}` } }] },
      { text: "ok" },
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "how big is it?" });
    await vi.waitFor(() => expect(h.llm.requests).toHaveLength(4), { timeout: 20_000 });
    const wc = String(h.llm.requests[3]!.messages.filter((m) => m.role === "tool").at(-1)?.content);
    expect(wc).toContain(String(photo.content.length));

    fake.userSends({ chatId: 111, fromId: 111, text: "/usage" });
    const all = await botSaysMatching(fake, /images\/gpt-image-1/);
    expect(all).toMatch(/images\/gpt-image-1: 4 in \(0 cached\), 272 out, 1 call/);
  });

  it("without an images endpoint the model is told how to configure one and no photo is sent", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.script(draw("a cat"), { text: "I cannot draw here yet." });
    fake.userSends({ chatId: 111, fromId: 111, text: "draw a cat" });
    await botSays(fake, 111, "I cannot draw here yet.");
    const toolResult = String(h.llm.requests[1]!.messages.find((m) => m.role === "tool")?.content);
    expect(toolResult).toMatch(/image_generate needs an images endpoint.*HERALD_IMAGES_URL/);
    expect(fake.callsTo("sendPhoto", 111)).toHaveLength(0);
  });
});

async function botSaysMatching(fake: FakeTelegram, pattern: RegExp): Promise<string> {
  let found = "";
  await vi.waitFor(
    () => {
      found =
        fake
          .botMessages(111)
          .map((m) => m.text ?? "")
          .find((t) => pattern.test(t)) ?? "";
      expect(found).not.toBe("");
    },
    { timeout: 10_000 },
  );
  return found;
}

describe("image_generate on Discord", () => {
  const running = platformPerTest<FakeDiscord>();

  it("uploads two PNGs with the reply", async () => {
    const fake = running.trackFake(await startFakeDiscord());
    const h = await running.startHarness({
      env: {
        DISCORD_BOT_TOKEN: fake.token,
        DISCORD_API_URL: fake.url,
        DISCORD_ALLOWED_USERS: IDS.alice,
        ...(await imagesEnv()),
      },
    });
    await fake.gateway.waitLive();
    h.llm.script(draw("two sailing boats", { n: 2 }), { text: "Two boats." });
    fake.userSays({ channelId: IDS.aliceDm, content: "draw boats" });
    await vi.waitFor(() => expect(fake.posted.flatMap((p) => p.files)).toHaveLength(2), { timeout: 20_000 });
    const files = fake.posted.flatMap((p) => p.files);
    expect(files.map((f) => f.name)).toEqual([
      expect.stringMatching(/-two-sailing-boats-1\.png$/),
      expect.stringMatching(/-two-sailing-boats-2\.png$/),
    ]);
    for (const f of files) expect(pngSize(f.data)).toEqual({ width: 64, height: 64 });
  });
});

describe("image_generate on Slack", () => {
  const running = platformPerTest<FakeSlack>();

  it("uploads the PNG into the conversation", async () => {
    const fake = running.trackFake(await startFakeSlack({ users: { U0ALICE01: { name: "alice" } } }));
    const h = await running.startHarness({
      env: {
        SLACK_BOT_TOKEN: fake.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: fake.apiUrl,
        SLACK_ALLOWED_USERS: "U0ALICE01",
        ...(await imagesEnv()),
      },
    });
    h.llm.script(draw("a mountain"), { text: "A mountain." });
    const body = eventCallback(messageEvent({ channel: "D0ALICE01", ts: "1700000001.000100", text: "draw" }));
    const res = await fetch(
      signedRequest(body, { secret: SIGNING_SECRET, url: `${h.apiUrl}/webhooks/slack/events` }),
    );
    expect(res.status).toBe(200);
    await vi.waitFor(() => expect(fake.uploads).toHaveLength(1), { timeout: 20_000 });
    expect(fake.uploads[0]).toMatchObject({
      channelId: "D0ALICE01",
      filename: expect.stringMatching(/-a-mountain\.png$/),
    });
    expect(pngSize(fake.uploads[0]!.bytes)).toEqual({ width: 64, height: 64 });
  });
});
