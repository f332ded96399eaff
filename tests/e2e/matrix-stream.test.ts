/**
 * Replies streamed into a Matrix room through the whole gateway: the fake homeserver records every event
 * the bot sends (the preview, then its `m.replace` edits); the scripted model writes its answer slowly.
 */
import { describe, expect, it } from "vitest";
import { type FakeHomeserver, type SentEvent, startFakeHomeserver } from "../fakes/matrix/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { ALICE } from "./matrix-env.js";

const running = platformPerTest<FakeHomeserver>();

async function start(env: Record<string, string> = {}) {
  const fake = running.trackFake(await startFakeHomeserver());
  fake.setDisplayName(ALICE, "Alice");
  const h = await running.startHarness({
    env: {
      MATRIX_HOMESERVER: fake.url,
      MATRIX_ACCESS_TOKEN: fake.botAccessToken,
      MATRIX_ALLOWED_USERS: ALICE,
      ...env,
    },
  });
  await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
  return { fake, h };
}

const ANSWER =
  "Lisbon is the capital of **Portugal**, on the Tagus river. It is one of the oldest cities in " +
  "western Europe, older than London, Paris and Rome. Its trams climb the seven hills.";

const posts = (f: FakeHomeserver, room: string) =>
  f.messages(room).filter((e) => e.content["msgtype"] === "m.text" && !e.content["m.new_content"]);
const replacements = (f: FakeHomeserver, room: string) =>
  f.messages(room).filter((e) => e.content["m.new_content"] !== undefined);
const newBody = (e: SentEvent) => String((e.content["m.new_content"] as { body: string }).body);

describe("matrix streamed replies", () => {
  it("shows a slow answer as it is written (≥ 3 m.replace of one event) and ends with the exact text", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE], direct: true });
    h.llm.script({ text: ANSWER, pieces: 20, chunkDelayMs: 450 });
    const question = fake.userSends(room, ALICE, "tell me about Lisbon");
    await fake.waitFor(() => {
      const last = replacements(fake, room).at(-1);
      return last && newBody(last) === ANSWER ? true : undefined;
    }, 20_000);
    await h.gateway.runner.outbox.idle();
    const [preview, ...others] = posts(fake, room);
    expect(others).toHaveLength(0);
    expect(preview!.content["m.relates_to"]).toEqual({ "m.in_reply_to": { event_id: question } });
    expect(String(preview!.content["body"]).length).toBeLessThan(ANSWER.length);
    const edits = replacements(fake, room);
    expect(edits.length).toBeGreaterThanOrEqual(3);
    expect(
      edits.every((e) => (e.content["m.relates_to"] as { event_id: string }).event_id === preview!.eventId),
    ).toBe(true);
    expect(
      String((edits.at(-1)!.content["m.new_content"] as { formatted_body: string }).formatted_body),
    ).toContain("<strong>Portugal</strong>");
  }, 30_000);
});
