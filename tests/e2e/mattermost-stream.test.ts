/**
 * Replies streamed into Mattermost through the whole gateway: the scripted model writes slowly, piece by
 * piece; the fake server keeps every post and records each edit (`PUT /posts/{id}`).
 */
import { describe, expect, it, vi } from "vitest";
import { BOT_TOKEN, type FakeMattermost, mmId, startFakeMattermost } from "../fakes/mattermost/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";

const ANN = mmId("ann");
const DM = mmId("dm-ann-herald");
const TEAM = mmId("town-square");

const running = platformPerTest<FakeMattermost>();

async function start(env: Record<string, string> = {}): Promise<{ fake: FakeMattermost; h: Harness }> {
  const fake = running.trackFake(await startFakeMattermost());
  fake.addUser(ANN, "ann");
  fake.addChannel(DM, "D");
  fake.addChannel(TEAM, "O", "town-square");
  const h = await running.startHarness({
    env: { MATTERMOST_URL: fake.url, MATTERMOST_TOKEN: BOT_TOKEN, MATTERMOST_ALLOWED_USERS: ANN, ...env },
  });
  await vi.waitFor(() => expect(fake.openSockets).toBeGreaterThan(0));
  return { fake, h };
}

const ANSWER =
  "Lisbon is the capital of **Portugal**, on the Tagus river. It is one of the oldest cities in " +
  "western Europe, older than London, Paris and Rome. Its trams climb the seven hills.";

const edits = (fake: FakeMattermost) =>
  fake.calls.filter((c) => c.method === "PUT" && c.path.startsWith("posts/"));

describe("mattermost streamed replies", () => {
  it("shows a slow answer as it is written, in one post edited in place, ending with the exact text", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: ANSWER, pieces: 10, chunkDelayMs: 300 });
    fake.userPost({ from: ANN, channel: DM, text: "tell me about Lisbon" });
    await vi.waitFor(() => expect(fake.botPostsIn(DM).at(-1)?.message).toBe(ANSWER), { timeout: 20_000 });
    await h.gateway.runner.outbox.idle();
    // One post: the preview became the answer; nothing was posted twice.
    expect(fake.botPostsIn(DM)).toHaveLength(1);
    expect(fake.posts.filter((p) => p.message === ANSWER)).toHaveLength(1);
    const shown = edits(fake).map((c) => String((c.body as { message: string }).message));
    expect(shown.length).toBeGreaterThanOrEqual(2);
    // Each edit showed more of the answer.
    for (let i = 1; i < shown.length; i++)
      expect(shown[i]!.length).toBeGreaterThanOrEqual(shown[i - 1]!.length);
  });

  it("in a channel the preview is in the thread of the question", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: ANSWER, pieces: 10, chunkDelayMs: 300 });
    const asked = fake.userPost({ from: ANN, channel: TEAM, text: "@herald tell me about Lisbon" });
    await vi.waitFor(() => expect(fake.botPostsIn(TEAM).at(-1)?.message).toBe(ANSWER), { timeout: 20_000 });
    await h.gateway.runner.outbox.idle();
    expect(fake.botPostsIn(TEAM)).toHaveLength(1);
    expect(fake.botPostsIn(TEAM)[0]!.root_id).toBe(asked);
    expect(edits(fake).length).toBeGreaterThanOrEqual(1);
  });

  it("MATTERMOST_STREAM=off sends the answer once, whole, with no edits", async () => {
    const { fake, h } = await start({ MATTERMOST_STREAM: "off" });
    h.llm.script({ text: ANSWER, pieces: 10, chunkDelayMs: 100 });
    fake.userPost({ from: ANN, channel: DM, text: "tell me about Lisbon" });
    await vi.waitFor(() => expect(fake.botPostsIn(DM).map((p) => p.message)).toEqual([ANSWER]), {
      timeout: 20_000,
    });
    await h.gateway.runner.outbox.idle();
    expect(edits(fake)).toHaveLength(0);
  });
});
