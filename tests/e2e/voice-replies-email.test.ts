/**
 * Voice replies by email through the gateway (a real Dovecot and SMTP sink): with `/voice on` the
 * answer mail carries the spoken reply as an MP3 attachment beside its text, also in a new conversation
 * (a new subject is a new thread; the mode belongs to the chat).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeSpeech, ffprobe, startFakeSpeech } from "../fakes/speech/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";
import { ALICE, type EmailEnv, eventually, startEmailEnv } from "./email-env.js";

let env: EmailEnv;
let harness: Harness | undefined;
let speech: FakeSpeech | undefined;

beforeAll(async () => {
  env = await startEmailEnv();
});
afterAll(async () => {
  await env?.close();
});
afterEach(async () => {
  await harness?.stop();
  await speech?.close();
  harness = undefined;
  speech = undefined;
});

describe("voice replies by email", () => {
  it("/voice on: the answer mail carries an MP3 attachment of the reply", async () => {
    speech = await startFakeSpeech();
    const bot = env.nextBot();
    harness = await startHarness({
      env: {
        ...env.gatewayEnv(bot),
        HERALD_TTS_URL: speech.baseUrl,
        HERALD_TTS_MODEL: "tts-1",
        HERALD_TTS_VOICE: "alloy",
      },
    });
    const sent = () => env.smtp.messages.filter((m) => m.envelope.from === bot.address);
    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "voice",
      text: "/voice on",
      messageId: "<v1@example.test>",
    });
    await eventually(async () => (sent().length >= 1 ? true : undefined), "the /voice answer", 20_000);
    expect(sent()[0]!.parsed.text).toMatch(/Voice replies are on/);
    harness.llm.script({ text: "The invoice was paid on Monday." });
    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "invoice",
      text: "was the invoice paid?",
      messageId: "<v2@example.test>",
    });
    const [, answer] = await eventually(
      async () => (sent().length >= 2 ? sent() : undefined),
      "the answer",
      30_000,
    );
    expect(answer!.parsed.text).toContain("The invoice was paid on Monday.");
    const attachment = answer!.parsed.attachments.find((a) => a.filename === "reply.mp3");
    expect(attachment?.contentType).toBe("audio/mpeg");
    const path = join(mkdtempSync(join(tmpdir(), "herald-email-audio-")), "reply.mp3");
    writeFileSync(path, attachment!.content);
    expect(await ffprobe(path)).toMatchObject({ codec: "mp3" });
  });
});
