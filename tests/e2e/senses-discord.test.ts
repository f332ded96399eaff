/**
 * The senses on a second platform, Discord through the whole gateway: a PDF and a DOCX a user attaches
 * reach the model as their text, and with `/voice on` a reply also arrives as an MP3 audio file upload.
 */

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { type FakeDiscord, IDS, startFakeDiscord } from "../fakes/discord/index.js";
import { type FakeSpeech, ffprobe, startFakeSpeech } from "../fakes/speech/index.js";
import { makeDocx, makePdf } from "../helpers/document-fixtures.js";
import { platformPerTest } from "../helpers/per-test.js";

const running = platformPerTest<FakeDiscord>();

async function start(env: Record<string, string> = {}) {
  const fake = running.trackFake(await startFakeDiscord());
  const h = await running.startHarness({
    env: {
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.url,
      DISCORD_ALLOWED_USERS: `${IDS.alice},${IDS.bob}`,
      ...env,
    },
  });
  await fake.gateway.waitLive();
  return { fake, h };
}

async function replies(f: FakeDiscord, count: number): Promise<string[]> {
  await vi.waitFor(() => expect(f.botMessages(IDS.aliceDm).length).toBeGreaterThanOrEqual(count), {
    timeout: 15_000,
  });
  return f.botMessages(IDS.aliceDm).map((p) => p.currentContent);
}

const userText = (request: { messages: { role: string; content?: unknown }[] }) =>
  String(request.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");

describe("senses on Discord", () => {
  it("a PDF and a DOCX attached on Discord reach the model as their text", async () => {
    const { fake, h } = await start();
    fake.userSays({
      channelId: IDS.aliceDm,
      content: "what does the invoice say?",
      attachments: [
        {
          fileName: "invoice.pdf",
          data: makePdf([["Invoice 4711 totals 99 euros"]]),
          contentType: "application/pdf",
        },
      ],
    });
    await replies(fake, 1);
    fake.userSays({
      channelId: IDS.aliceDm,
      content: "and the minutes?",
      attachments: [
        {
          fileName: "minutes.docx",
          data: await makeDocx(["Minutes: ship on Friday"]),
          contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        },
      ],
    });
    await replies(fake, 2);
    const [first, second] = h.llm.requests.map(userText);
    expect(first).toContain("[text of invoice.pdf (pdf):]\nInvoice 4711 totals 99 euros");
    expect(second).toContain("[text of minutes.docx (docx):]\nMinutes: ship on Friday");
  });

  it("/voice on: the reply also arrives as an MP3 audio file", async () => {
    let speech: FakeSpeech | undefined;
    try {
      speech = await startFakeSpeech();
      const { fake, h } = await start({
        HERALD_TTS_URL: speech.baseUrl,
        HERALD_TTS_MODEL: "tts-1",
        HERALD_TTS_VOICE: "alloy",
      });
      fake.userSays({ channelId: IDS.aliceDm, content: "/voice on" });
      expect((await replies(fake, 1))[0]).toMatch(/Voice replies are on/);
      h.llm.script({ text: "Rain is expected after noon." });
      fake.userSays({ channelId: IDS.aliceDm, content: "weather?" });
      await vi.waitFor(() => expect(fake.posted.flatMap((p) => p.files)).toHaveLength(1), {
        timeout: 20_000,
      });
      expect(await replies(fake, 2)).toContain("Rain is expected after noon.");
      const file = fake.posted.flatMap((p) => p.files)[0]!;
      expect(file.name).toBe("reply.mp3");
      expect(speech.speeches[0]).toMatchObject({
        input: "Rain is expected after noon.",
        responseFormat: "mp3",
      });
      const path = join(mkdtempSync(join(tmpdir(), "herald-discord-audio-")), "reply.mp3");
      writeFileSync(path, file.data);
      expect(await ffprobe(path)).toMatchObject({ codec: "mp3" });
    } finally {
      await speech?.close();
    }
  });
});
