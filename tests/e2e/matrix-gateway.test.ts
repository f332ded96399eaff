/**
 * Matrix through the whole gateway: the fake homeserver, the real adapter configured by env as an
 * operator would, the real runner, state, queue and agent, and the scripted fake model.
 */
import { describe, expect, it } from "vitest";
import { type FakeHomeserver, type SentEvent, startFakeHomeserver } from "../fakes/matrix/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { expectValidChunks, longReply } from "../helpers/long-reply.js";
import { platformPerTest } from "../helpers/per-test.js";
import { ALICE, BOB, MALLORY } from "./matrix-env.js";

const running = platformPerTest<FakeHomeserver>();

async function start(env: Record<string, string> = {}) {
  const fake = running.trackFake(await startFakeHomeserver());
  fake.setDisplayName(ALICE, "Alice");
  fake.setDisplayName(BOB, "Bob");
  const h = await running.startHarness({
    env: {
      MATRIX_HOMESERVER: fake.url,
      MATRIX_ACCESS_TOKEN: fake.botAccessToken,
      MATRIX_ALLOWED_USERS: `${ALICE},${BOB}`,
      ...env,
    },
  });
  return { fake, h };
}

const bodies = (events: SentEvent[]) => events.map((e) => String(e.content["body"]));
const replies = (f: FakeHomeserver, roomId: string) =>
  f.messages(roomId).filter((e) => e.content["msgtype"] === "m.text" && !e.content["m.new_content"]);
const waitReplies = (f: FakeHomeserver, roomId: string, n: number) =>
  f.waitFor(() => (replies(f, roomId).length >= n ? replies(f, roomId) : undefined));
const userText = (h: Harness, i: number) =>
  JSON.stringify(h.llm.requests[i]?.messages.filter((m) => m.role === "user").map((m) => m.content));

describe("matrix through the gateway", () => {
  it("answers a DM through the model as a reply with HTML, showing typing while it works", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    h.llm.script({ text: "Hello **Alice**, nice to meet you.", delayMs: 300 });
    const question = fake.userSends(room, ALICE, "hi, who are you?");
    const [reply] = await waitReplies(fake, room, 1);
    expect(reply!.content).toMatchObject({
      body: "Hello **Alice**, nice to meet you.",
      format: "org.matrix.custom.html",
      "m.relates_to": { "m.in_reply_to": { event_id: question } },
    });
    expect(String(reply!.content["formatted_body"])).toContain("<strong>Alice</strong>");
    expect(fake.typing.some((t) => t.roomId === room && t.typing)).toBe(true);
    expect(userText(h, 0)).toContain("hi, who are you?");
  });

  it("ignores room chatter without a mention and answers a mention", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE, BOB], name: "Team" });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    fake.userSends(room, BOB, "lunch at noon?");
    const asked = fake.userSends(room, ALICE, {
      msgtype: "m.text",
      body: "Herald: what's 2+2?",
      format: "org.matrix.custom.html",
      formatted_body: '<a href="https://matrix.to/#/@herald:localhost">Herald</a>: what\'s 2+2?',
      "m.mentions": { user_ids: ["@herald:localhost"] },
    });
    const [reply] = await waitReplies(fake, room, 1);
    expect(reply!.content["body"]).toBe("echo: what's 2+2?");
    expect(reply!.content["m.relates_to"]).toEqual({ "m.in_reply_to": { event_id: asked } });
    expect(h.llm.requests).toHaveLength(1);
    expect(userText(h, 0)).not.toContain("lunch");
  });

  it("answers every room message when MATRIX_REQUIRE_MENTION is false", async () => {
    const { fake, h } = await start({ MATRIX_REQUIRE_MENTION: "false" });
    const room = fake.createRoom({ members: [ALICE, BOB], name: "Team" });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    fake.userSends(room, BOB, "anyone know the wifi password?");
    const [reply] = await waitReplies(fake, room, 1);
    expect(reply!.content["body"]).toBe("echo: anyone know the wifi password?");
  });

  it("keeps threads apart and answers in a thread it already answered in without a mention", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE, BOB] });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    const rootA = fake.userSends(room, ALICE, "thread A");
    const rootB = fake.userSends(room, BOB, "thread B");
    const inThread = (root: string, body: string) => ({
      msgtype: "m.text",
      body,
      "m.relates_to": {
        rel_type: "m.thread",
        event_id: root,
        is_falling_back: true,
        "m.in_reply_to": { event_id: root },
      },
    });
    fake.userSends(room, ALICE, inThread(rootA, "Herald: the secret is plum"));
    await waitReplies(fake, room, 1);
    fake.userSends(room, BOB, inThread(rootB, "Herald: fresh topic"));
    await waitReplies(fake, room, 2);
    fake.userSends(room, BOB, inThread(rootA, "what was the secret?"));
    const all = await waitReplies(fake, room, 3);
    const threadOf = (e: SentEvent) =>
      (e.content["m.relates_to"] as { event_id?: string; rel_type?: string }).event_id;
    expect(all.map(threadOf)).toEqual([rootA, rootB, rootA]);
    expect(
      all.every((e) => (e.content["m.relates_to"] as { rel_type: string }).rel_type === "m.thread"),
    ).toBe(true);
    expect(h.llm.requests).toHaveLength(3);
    expect(userText(h, 1)).not.toContain("plum");
    expect(userText(h, 2)).toContain("plum");
    expect(userText(h, 2)).not.toContain("fresh topic");
  });

  it("delivers a long answer in events of at most 4,000 characters with valid code fences", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    h.llm.script({ text: longReply({ lines: 150, padding: 30, proseRepeats: 120 }) });
    fake.userSends(room, ALICE, "write a long one");
    await fake.waitFor(() =>
      bodies(replies(fake, room)).some((b) => b.endsWith("a while.") && replies(fake, room).length > 2),
    );
    await h.gateway.runner.outbox.idle();
    const chunks = bodies(replies(fake, room));
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expectValidChunks(chunks, { maxChars: 4000, lines: 150 });
  });

  it("shows tool progress as one notice edited with m.replace and removed when the answer is out", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    h.llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] }, { text: "Done." });
    fake.userSends(room, ALICE, "search for tea");
    await fake.waitFor(() => bodies(replies(fake, room)).includes("Done."));
    const notice = fake
      .messages(room)
      .find((e) => e.content["msgtype"] === "m.notice" && !e.content["m.new_content"]);
    expect(String(notice?.content["body"])).toContain("session_search");
    await fake.waitFor(() =>
      fake.sent.some((e) => e.type === "m.room.redaction" && e.content["redacts"] === notice!.eventId),
    );
  });

  it("after a restart answers new messages only, never the old ones again", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE], direct: true });
    fake.userSends(room, ALICE, "history from before Herald existed");
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    fake.userSends(room, ALICE, "first");
    await waitReplies(fake, room, 1);
    const before = h.llm.requests.length;
    await h.restart();
    fake.userSends(room, ALICE, "second");
    await waitReplies(fake, room, 2);
    await h.gateway.runner.outbox.idle();
    expect(bodies(replies(fake, room))).toEqual(["echo: first", "echo: second"]);
    // After the restart the model was asked once, about the new message only.
    expect(h.llm.requests.slice(before).map((r) => r.messages.at(-1)?.content)).toEqual(["second"]);
  });

  it("a gateway killed mid-turn answers exactly once after it starts again", async () => {
    const { fake, h } = await start();
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    h.llm.script({ text: "first attempt", delayMs: 20_000 });
    fake.userSends(room, ALICE, "a question");
    await h.llm.waitForRequests(1);
    await h.crash();
    h.llm.script({ text: "the answer" });
    await h.start();
    await waitReplies(fake, room, 1);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    await h.gateway.runner.outbox.idle();
    expect(bodies(replies(fake, room))).toEqual(["the answer"]);
  });

  it("joins rooms allowed users invite it to (also via GATEWAY_ALLOWED_USERS) and declines strangers", async () => {
    const carol = "@carol:localhost";
    const { fake, h } = await start({ GATEWAY_ALLOWED_USERS: `matrix:${carol}` });
    await fake.waitFor(() => h.gateway.adapters.get("matrix")?.status?.().state === "running");
    const fromAlice = fake.createRoom({ members: [ALICE], bot: "invite", isDirectInvite: true });
    const fromCarol = fake.createRoom({ members: [carol], bot: "invite" });
    const fromMallory = fake.createRoom({ members: [MALLORY], bot: "invite", isDirectInvite: true });
    const membership = (room: string) => fake.state.membership(room, fake.botUserId)?.membership;
    await fake.waitFor(
      () =>
        membership(fromAlice) === "join" &&
        membership(fromCarol) === "join" &&
        membership(fromMallory) === "leave",
    );
    fake.userSends(fromAlice, ALICE, "hello in our new DM");
    const [reply] = await waitReplies(fake, fromAlice, 1);
    expect(reply!.content["body"]).toBe("echo: hello in our new DM");
    expect(fake.messages(fromMallory)).toHaveLength(0);
  });

  it("a refused token fails the Matrix adapter clearly while the rest of the gateway runs", async () => {
    const fake = running.trackFake(await startFakeHomeserver());
    const harness = await running.startHarness({
      env: { MATRIX_HOMESERVER: fake.url, MATRIX_ACCESS_TOKEN: "revoked", MATRIX_ALLOWED_USERS: ALICE },
    });
    expect(harness.gateway.failed.get("matrix")).toContain("MATRIX_ACCESS_TOKEN");
    const res = await fetch(`${harness.apiUrl}/health`);
    expect(res.status).toBe(200);
  });
});
