/**
 * Voice replies on Slack through the gateway (HTTP events): with `/voice on` the reply's text is posted
 * and the spoken reply uploaded as an MP3 file into the same conversation.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  eventCallback,
  type FakeSlack,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import { type FakeSpeech, ffprobe, startFakeSpeech } from "../fakes/speech/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { SIGNING_SECRET } from "./slack-helpers.js";

const running = platformPerTest<FakeSlack>();
let speech: FakeSpeech | undefined;
afterEach(async () => {
  await speech?.close();
  speech = undefined;
});

async function deliver(h: Harness, ts: string, text: string) {
  const body = eventCallback(messageEvent({ channel: "D0ALICE01", ts, text }));
  const res = await fetch(
    signedRequest(body, { secret: SIGNING_SECRET, url: `${h.apiUrl}/webhooks/slack/events` }),
  );
  expect(res.status).toBe(200);
}

const texts = (f: FakeSlack) => f.callsOf("chat.postMessage").map((c) => String(c.args["text"]));

describe("voice replies on Slack", () => {
  it("/voice on: the reply is posted and uploaded as an MP3", async () => {
    speech = await startFakeSpeech();
    const fake = running.trackFake(await startFakeSlack({ users: { U0ALICE01: { name: "alice" } } }));
    const h = await running.startHarness({
      env: {
        SLACK_BOT_TOKEN: fake.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: fake.apiUrl,
        SLACK_ALLOWED_USERS: "U0ALICE01",
        HERALD_TTS_URL: speech.baseUrl,
        HERALD_TTS_MODEL: "tts-1",
        HERALD_TTS_VOICE: "alloy",
      },
    });
    await deliver(h, "1700000001.000100", "/voice on");
    await vi.waitFor(() => expect(texts(fake).join()).toMatch(/Voice replies are on/), { timeout: 10_000 });
    h.llm.script({ text: "The deploy finished at noon." });
    await deliver(h, "1700000002.000100", "when did the deploy finish?");
    await vi.waitFor(() => expect(fake.uploads).toHaveLength(1), { timeout: 20_000 });
    expect(texts(fake)).toContain("The deploy finished at noon.");
    const upload = fake.uploads[0]!;
    expect(upload).toMatchObject({ filename: "reply.mp3", channelId: "D0ALICE01" });
    const path = join(mkdtempSync(join(tmpdir(), "herald-slack-audio-")), "reply.mp3");
    writeFileSync(path, upload.bytes);
    expect(await ffprobe(path)).toMatchObject({ codec: "mp3" });
  });
});
