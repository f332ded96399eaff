/**
 * Voice notes through the whole gateway: a real Ogg/Opus note (espeak-ng + ffmpeg) sent on Telegram is
 * downloaded by the real adapter, transcribed by a fake OpenAI-compatible speech server before the turn,
 * and the model sees the transcript marked as such; a provider that keeps failing is told to the model
 * once, in the message, so the user hears why.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeSpeech, makeVoiceNote, startFakeSpeech } from "../fakes/speech/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, fixture, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let speech: FakeSpeech | undefined;
afterEach(async () => {
  await speech?.close();
  speech = undefined;
});

async function voiceUpdate(fake: FakeTelegram, text: string) {
  const ogg = await makeVoiceNote(mkdtempSync(join(tmpdir(), "herald-voice-")), text);
  const file = fake.addFile(readFileSync(ogg), "voice/file_7.oga");
  const update = await fixture("private-voice");
  Object.assign(update["message"] as Record<string, unknown>, {
    voice: { ...file, duration: 2, mime_type: "audio/ogg" },
  });
  return update;
}

const lastUser = (request: { messages: { role: string; content?: unknown }[] }) =>
  String(request.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");

describe("voice notes", () => {
  it("are transcribed before the turn and the model sees the transcript", async () => {
    speech = await startFakeSpeech();
    speech.onTranscribe(() => "please book a table for two");
    const { fake, h } = await startTelegramGateway(running, {
      HERALD_STT_URL: speech.baseUrl,
      HERALD_STT_MODEL: "whisper-1",
    });
    fake.pushUpdate(await voiceUpdate(fake, "please book a table for two"));
    await botReplies(fake, 111, 1);
    expect(lastUser(h.llm.requests[0]!)).toContain("[voice note, transcribed:] please book a table for two");
    expect(speech.transcriptions).toHaveLength(1);
    expect(speech.transcriptions[0]).toMatchObject({ model: "whisper-1" });
    expect(speech.transcriptions[0]!.probe).toMatchObject({ codec: "opus" });
  });

  it("a provider that keeps failing is told in the message, and the turn still runs", async () => {
    speech = await startFakeSpeech();
    speech.fail({ status: 500, times: 10, message: "overloaded" });
    const { fake, h } = await startTelegramGateway(running, {
      HERALD_STT_URL: speech.baseUrl,
      HERALD_STT_MODEL: "whisper-1",
    });
    fake.pushUpdate(await voiceUpdate(fake, "hello"));
    await botReplies(fake, 111, 1);
    expect(lastUser(h.llm.requests[0]!)).toMatch(/\[the voice note could not be transcribed: .+\]/);
  });
});
