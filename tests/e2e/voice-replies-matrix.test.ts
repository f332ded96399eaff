/**
 * Voice replies on Matrix through the gateway (the fake homeserver): with `/voice on` the reply's text
 * is followed by an `m.audio` event whose media is an MP3 uploaded to the content repository.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeHomeserver, startFakeHomeserver } from "../fakes/matrix/index.js";
import { type FakeSpeech, ffprobe, startFakeSpeech } from "../fakes/speech/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { ALICE } from "./matrix-env.js";

const running = platformPerTest<FakeHomeserver>();
let speech: FakeSpeech | undefined;
afterEach(async () => {
  await speech?.close();
  speech = undefined;
});

describe("voice replies on Matrix", () => {
  it("/voice on: the reply is followed by an m.audio event with an MP3", async () => {
    speech = await startFakeSpeech();
    const fake = running.trackFake(await startFakeHomeserver());
    const h = await running.startHarness({
      env: {
        MATRIX_HOMESERVER: fake.url,
        MATRIX_ACCESS_TOKEN: fake.botAccessToken,
        MATRIX_ALLOWED_USERS: ALICE,
        HERALD_TTS_URL: speech.baseUrl,
        HERALD_TTS_MODEL: "tts-1",
        HERALD_TTS_VOICE: "alloy",
      },
    });
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    fake.userSends(room, ALICE, "/voice on");
    await fake.waitFor(() =>
      fake.messages(room).some((e) => /Voice replies are on/.test(String(e.content["body"]))),
    );
    h.llm.script({ text: "Your train leaves from platform four." });
    fake.userSends(room, ALICE, "which platform?");
    const audio = await fake.waitFor(
      () => fake.messages(room).find((e) => e.content["msgtype"] === "m.audio"),
      20_000,
    );
    const bodies = fake.messages(room).map((e) => String(e.content["body"]));
    expect(bodies).toContain("Your train leaves from platform four.");
    expect(audio.content).toMatchObject({ body: "reply.mp3", info: { mimetype: "audio/mpeg" } });
    const [, server, id] = /^mxc:\/\/([^/]+)\/(.+)$/.exec(String(audio.content["url"]))!;
    const res = await fetch(`${fake.url}/_matrix/client/v1/media/download/${server}/${id}`, {
      headers: { authorization: `Bearer ${fake.botAccessToken}` },
    });
    const path = join(mkdtempSync(join(tmpdir(), "herald-matrix-audio-")), "reply.mp3");
    writeFileSync(path, Buffer.from(await res.arrayBuffer()));
    expect(await ffprobe(path)).toMatchObject({ codec: "mp3" });
  });
});
