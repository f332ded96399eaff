/**
 * Replies streamed into a Discord channel through the whole gateway: the fake Discord records every
 * POST and PATCH of a message; the scripted model writes its answer slowly, piece by piece.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeDiscord, IDS, startFakeDiscord } from "../fakes/discord/index.js";
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

const ANSWER =
  "Lisbon is the capital of **Portugal**, on the Tagus river. It is one of the oldest cities in " +
  "western Europe, older than London, Paris and Rome. Its trams climb the seven hills.";

describe("discord streamed replies", () => {
  it("shows a slow answer as it is written (≥ 3 edits of one message, quoting the question) and ends exact", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: ANSWER, pieces: 16, chunkDelayMs: 400 });
    const asked = fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> tell me about Lisbon` });
    await vi.waitFor(() => expect(fake.botMessages(IDS.general)[0]?.currentContent).toBe(ANSWER), {
      timeout: 20_000,
    });
    await h.gateway.runner.outbox.idle();
    expect(fake.posted).toHaveLength(1);
    const [message] = fake.botMessages(IDS.general);
    expect(message!.replyTo).toBe(asked["id"]);
    expect(message!.content.length).toBeLessThan(ANSWER.length);
    expect(message!.edits.length).toBeGreaterThanOrEqual(3);
    const lengths = message!.edits.map((e) => e.length);
    for (let i = 1; i < lengths.length; i++) expect(lengths[i]).toBeGreaterThan(lengths[i - 1]!);
    // Mid-stream the open bold was closed in the preview, never shown as a stray `**`.
    expect(
      [message!.content, ...message!.edits].every((t) => (t.match(/\*\*/g) ?? []).length % 2 === 0),
    ).toBe(true);
  }, 30_000);

  it("with DISCORD_STREAM=off posts the reply whole, without edits", async () => {
    const { fake, h } = await start({ DISCORD_STREAM: "off" });
    h.llm.script({ text: ANSWER, pieces: 6, chunkDelayMs: 200 });
    fake.userSays({ channelId: IDS.aliceDm, content: "tell me about Lisbon" });
    await vi.waitFor(() => expect(fake.botMessages(IDS.aliceDm)).toHaveLength(1), { timeout: 15_000 });
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessages(IDS.aliceDm)[0]!.content).toBe(ANSWER);
    expect(fake.botMessages(IDS.aliceDm)[0]!.edits).toHaveLength(0);
  }, 30_000);
});
