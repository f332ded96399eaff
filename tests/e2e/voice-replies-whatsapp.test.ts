/**
 * Voice replies on WhatsApp through the gateway (the adapter on a fake socket with Baileys' own event
 * buffer): with `/voice on` the reply's text is followed by a push-to-talk audio message whose file is
 * Ogg/Opus.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWhatsAppAdapter, type WhatsAppAdapter } from "../../adapters/whatsapp/index.js";
import { whatsappPlatform } from "../../adapters/whatsapp/module.js";
import { loadConfig, sectionOf } from "../../app/config.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeSpeech, startFakeSpeech } from "../fakes/speech/index.js";
import { FakeWhatsApp, fixture, seedLinkedCreds, withId, withText } from "../fakes/whatsapp/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";
import { MemoryKv } from "./whatsapp-env.js";

let harness: Harness | undefined;
let speech: FakeSpeech | undefined;
let home: string | undefined;

afterEach(async () => {
  await harness?.stop();
  await speech?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  harness = undefined;
  speech = undefined;
  home = undefined;
});

describe("voice replies on WhatsApp", () => {
  it("/voice on: the reply is followed by a push-to-talk Ogg/Opus voice note", async () => {
    speech = await startFakeSpeech();
    home = mkdtempSync(join(tmpdir(), "herald-wa-voice-"));
    await seedLinkedCreds(join(home, "whatsapp"));
    const fake = new FakeWhatsApp();
    const env = {
      HERALD_HOME: home,
      WHATSAPP_ALLOWED_USERS: "+15551234567",
      HERALD_TTS_URL: speech.baseUrl,
      HERALD_TTS_MODEL: "tts-1",
      HERALD_TTS_VOICE: "alloy",
    };
    const dir = home;
    let adapter: WhatsAppAdapter | undefined;
    harness = await startHarness({
      env,
      adapters: () => {
        adapter = createWhatsAppAdapter(
          sectionOf(loadConfig({ env }), whatsappPlatform),
          { logger: silentLogger(), homeDir: dir, cacheDir: join(dir, "cache"), kv: new MemoryKv() },
          { socketFactory: fake.factory, onQr: () => undefined, backoff: { baseMs: 20, maxMs: 200 } },
        );
        return [adapter];
      },
    });
    await fake.waitFor(() => adapter?.status().state === "running", "WhatsApp to be connected");
    fake.current.deliver(withText(withId(fixture("dm-text"), "3EB0VOICE1"), "/voice on"));
    expect((await fake.waitForTexts(1))[0]).toMatch(/Voice replies are on/);
    harness.llm.script({ text: "Your parcel arrives on Monday." });
    fake.current.deliver(withText(withId(fixture("dm-text"), "3EB0VOICE2"), "where is my parcel?"));
    const audio = await fake.waitFor(
      () => fake.sent().find((s) => "audio" in s.content),
      "a voice note to be sent",
      20_000,
    );
    expect(fake.texts()).toContain("Your parcel arrives on Monday.");
    expect(audio.content).toMatchObject({ ptt: true, mimetype: "audio/ogg; codecs=opus" });
    const url = (audio.content as { audio: { url: string } }).audio.url;
    const bytes = readFileSync(url);
    expect(bytes.subarray(0, 4).toString("latin1")).toBe("OggS");
    expect(bytes.includes(Buffer.from("OpusHead"))).toBe(true);
  });
});
