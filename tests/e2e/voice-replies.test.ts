/**
 * Voice out through the whole gateway: `/voice on` in a Telegram chat makes the next reply arrive as
 * the text and a `sendVoice` with a real Ogg/Opus file (synthesized by the fake speech server), in the
 * same turn; `/voice only` sends the voice note alone; `/voice on` without a speech endpoint says how to
 * configure one; `text_to_speech` through the API server returns the audio file with the reply.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type FakeSpeech, ffprobe, startFakeSpeech } from "../fakes/speech/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { chat } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let speech: FakeSpeech | undefined;
afterEach(async () => {
  await speech?.close();
  speech = undefined;
});

const ttsEnv = (fake: FakeSpeech) => ({
  HERALD_TTS_URL: fake.baseUrl,
  HERALD_TTS_MODEL: "tts-1",
  HERALD_TTS_VOICE: "alloy",
});

/** Ogg's capture pattern, then the OpusHead packet of the first page. */
function expectOggOpus(bytes: Buffer): void {
  expect(bytes.subarray(0, 4).toString("latin1")).toBe("OggS");
  const bodyAt = 27 + (bytes[26] ?? 0);
  expect(bytes.subarray(bodyAt, bodyAt + 8).toString("latin1")).toBe("OpusHead");
}

describe("voice replies", () => {
  it("/voice on: the reply arrives as text and as an Ogg/Opus voice note in the same turn", async () => {
    speech = await startFakeSpeech();
    const { fake, h } = await startTelegramGateway(running, ttsEnv(speech));
    fake.userSends({ chatId: 111, fromId: 111, text: "/voice on" });
    expect((await botReplies(fake, 111, 1))[0]).toMatch(/Voice replies are on/);
    h.llm.script({ text: "The museum opens at nine tomorrow." });
    fake.userSends({ chatId: 111, fromId: 111, text: "when does the museum open?" });
    await vi.waitFor(() => expect(fake.callsTo("sendVoice", 111)).toHaveLength(1), { timeout: 20_000 });
    const texts = (await botReplies(fake, 111, 3)).filter(Boolean);
    expect(texts.at(-1)).toBe("The museum opens at nine tomorrow.");
    expect(speech.speeches).toHaveLength(1);
    expect(speech.speeches[0]).toMatchObject({
      input: "The museum opens at nine tomorrow.",
      voice: "alloy",
      responseFormat: "opus",
    });
    const voice = fake.callsTo("sendVoice", 111)[0]!;
    const upload = Object.values(voice.files)[0]!;
    expectOggOpus(upload.content);
    // Text first, then the voice note: one outbox item, delivered in order.
    const order = fake.calls
      .filter((c) => ["sendMessage", "sendVoice"].includes(c.method))
      .map((c) => c.method);
    expect(order.slice(-2)).toEqual(["sendMessage", "sendVoice"]);
  });

  it("/voice only: the reply arrives as the voice note alone; /voice off brings text back", async () => {
    speech = await startFakeSpeech();
    const { fake, h } = await startTelegramGateway(running, ttsEnv(speech));
    fake.userSends({ chatId: 111, fromId: 111, text: "/voice only" });
    expect((await botReplies(fake, 111, 1))[0]).toMatch(/Voice only/);
    h.llm.script({ text: "Only spoken." });
    fake.userSends({ chatId: 111, fromId: 111, text: "say it" });
    await vi.waitFor(() => expect(fake.callsTo("sendVoice", 111)).toHaveLength(1), { timeout: 20_000 });
    expect(fake.botMessages(111).map((m) => m.text)).not.toContain("Only spoken.");
    expectOggOpus(Object.values(fake.callsTo("sendVoice", 111)[0]!.files)[0]!.content);

    fake.userSends({ chatId: 111, fromId: 111, text: "/voice off" });
    await botReplies(fake, 111, 3);
    h.llm.script({ text: "Back to text." });
    fake.userSends({ chatId: 111, fromId: 111, text: "and now?" });
    expect(await botReplies(fake, 111, 4)).toContain("Back to text.");
    expect(fake.callsTo("sendVoice", 111)).toHaveLength(1);
  });

  it("/voice on without a speech endpoint says how to configure one", async () => {
    const { fake } = await startTelegramGateway(running);
    fake.userSends({ chatId: 111, fromId: 111, text: "/voice on" });
    expect((await botReplies(fake, 111, 1))[0]).toMatch(/not available.*HERALD_TTS_URL/);
  });

  it("text_to_speech through the API server returns the audio file with the reply", async () => {
    speech = await startFakeSpeech();
    const h = await running.startHarness({ env: ttsEnv(speech) });
    h.llm.script(
      { toolCalls: [{ name: "text_to_speech", arguments: { text: "Good morning, Ada." } }] },
      { text: "Here is your greeting." },
    );
    const res = await chat(h, "say good morning to me");
    expect(res.text).toBe("Here is your greeting.");
    const message = (
      res.body as { choices: { message: { herald_files?: { path: string; mime_type: string }[] } }[] }
    ).choices[0]!.message;
    const file = message.herald_files?.[0];
    expect(file?.mime_type).toBe("audio/mpeg");
    expect(speech.speeches[0]).toMatchObject({ input: "Good morning, Ada.", responseFormat: "mp3" });
    expect(await ffprobe(file!.path)).toMatchObject({ codec: "mp3" });
    expect(readFileSync(file!.path).length).toBeGreaterThan(1000);
    // The model was told where the file is and that it goes with the reply.
    const toolResult = h.llm.requests[1]!.messages.find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toMatch(/Spoken: 18 characters as an audio file/);
  });
});
