/**
 * The Matrix adapter end to end at the adapter boundary: the real matrix-js-sdk against the fake
 * homeserver, a recording stand-in for the gateway.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import { ALICE, BOB, fixture, MALLORY, type MatrixEnv, startMatrixEnv } from "./matrix-env.js";

let env: MatrixEnv;

beforeEach(async () => {
  env = await startMatrixEnv();
});

afterEach(async () => {
  await env.close();
});

const key = (n: string) => `test-${n}`;

describe("Matrix adapter: receiving", () => {
  it("passes a DM as a mentioned dm message and answers it in the room as a reply", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    const adapter = await env.start();
    const eventId = fake.userSends(room, ALICE, "hello there");
    const [msg] = await env.waitForReceived(1);
    expect(msg).toMatchObject({
      platform: "matrix",
      messageId: eventId,
      chat: { platform: "matrix", chatId: room },
      chatType: "dm",
      sender: { id: ALICE, name: "Alice" },
      text: "hello there",
      mentioned: true,
      replyToId: eventId,
    });
    expect(msg!.chat.threadId).toBeUndefined();

    const result = await adapter.send(msg!.chat, {
      text: "Hi **Alice**!",
      replyToId: eventId,
      idempotencyKey: key("dm"),
    });
    const [sent] = await fake.waitForMessages(1, room);
    expect(result.messageIds).toEqual([sent!.eventId]);
    expect(sent!.content).toMatchObject({
      msgtype: "m.text",
      body: "Hi **Alice**!",
      format: "org.matrix.custom.html",
      "m.relates_to": { "m.in_reply_to": { event_id: eventId } },
    });
    expect(sent!.content["formatted_body"]).toContain("<strong>Alice</strong>");
  });

  it("treats a two-person room created after start as a DM even without m.direct", async () => {
    await env.start();
    const room = env.fake.createRoom({ members: [ALICE] });
    env.fake.userSends(room, ALICE, "no m.direct here");
    const [msg] = await env.waitForReceived(1);
    expect(msg).toMatchObject({ chatType: "dm", mentioned: true });
  });

  it("never passes on messages from before the first sync, or its own messages", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    fake.userSends(room, ALICE, "old message 1");
    fake.userSends(room, ALICE, "old message 2");
    const adapter = await env.start();
    await adapter.send(
      { platform: "matrix", chatId: room },
      { text: "I am the bot", idempotencyKey: key("own") },
    );
    fake.userSends(room, ALICE, "new message");
    fake.userSends(room, ALICE, "marker");
    // A room's messages arrive in order: anything replayed or echoed would come before the marker.
    await env.waitForReceived(2);
    expect(env.received.map((m) => m.text)).toEqual(["new message", "marker"]);
  });

  it("marks group messages mentioned only when the bot is addressed, and strips the mention", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE, BOB], name: "Team" });
    const adapter = await env.start();
    fake.userSends(room, BOB, "just chatting among humans");
    fake.userSends(room, ALICE, fixture<{ content: Record<string, unknown> }>("mention-pill").content);
    fake.userSends(room, ALICE, { msgtype: "m.text", body: "@herald:localhost /new" });
    const msgs = await env.waitForReceived(3);
    expect(msgs.map((m) => [m.chatType, m.mentioned, m.text])).toEqual([
      ["group", false, "just chatting among humans"],
      ["group", true, "what is the capital of France?"],
      ["group", true, "/new"],
    ]);

    // A reply to one of the bot's messages addresses it too; the quoted fallback is not part of the text.
    const { messageIds } = await adapter.send(msgs[1]!.chat, {
      text: "Paris.",
      idempotencyKey: key("paris"),
    });
    const reply = fixture<{ content: Record<string, unknown> }>("reply-to-bot").content;
    const replyJson = JSON.stringify(reply).replaceAll("$EVENT", messageIds[0]!);
    fake.userSends(room, BOB, JSON.parse(replyJson) as Record<string, unknown>);
    const [, , , last] = await env.waitForReceived(4);
    expect(last).toMatchObject({ mentioned: true, text: "and of Italy?", sender: { id: BOB } });
  });

  it("gives each thread its own chat and sends replies into the thread", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE, BOB] });
    const rootA = fake.userSends(room, ALICE, "topic A");
    const rootB = fake.userSends(room, BOB, "topic B");
    const adapter = await env.start();
    const inThread = (root: string, body: string) =>
      JSON.parse(
        JSON.stringify(fixture<{ content: object }>("thread-message").content)
          .replaceAll("$ROOT", root)
          .replace("Herald: summarise this thread", body),
      );
    fake.userSends(room, ALICE, inThread(rootA, "Herald: in A"));
    fake.userSends(room, BOB, inThread(rootB, "Herald: in B"));
    fake.userSends(room, ALICE, "Herald: in the main timeline");
    const msgs = await env.waitForReceived(3);
    expect(msgs.map((m) => [m.chat.threadId, m.text])).toEqual([
      [rootA, "in A"],
      [rootB, "in B"],
      [undefined, "in the main timeline"],
    ]);
    await adapter.send(msgs[0]!.chat, {
      text: "answer in A",
      replyToId: msgs[0]!.messageId,
      idempotencyKey: key("a"),
    });
    const [sent] = await fake.waitForMessages(1, room);
    expect(sent!.content["m.relates_to"]).toEqual({
      rel_type: "m.thread",
      event_id: rootA,
      is_falling_back: false,
      "m.in_reply_to": { event_id: msgs[0]!.messageId },
    });
  });

  it("skips a malformed event and keeps receiving", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await env.start();
    const bad = fixture<{ content: Record<string, unknown> }>("malformed");
    fake.injectEvent(room, { type: "m.room.message", sender: ALICE, content: bad.content });
    fake.injectEvent(room, { type: "m.room.message", sender: ALICE, content: { msgtype: "m.text" } });
    fake.userSends(room, ALICE, "still there?");
    const msgs = await env.waitForReceived(1);
    expect(msgs.map((m) => m.text)).toEqual(["still there?"]);
    expect(env.adapter?.status().state).toBe("running");
  });

  it("downloads an image into the cache folder and passes it as an attachment", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await env.start();
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex");
    const mxc = fake.addMedia(png, "image/png");
    const image = JSON.parse(JSON.stringify(fixture("image").content).replace("mxc://localhost/MEDIA", mxc));
    fake.userSends(room, ALICE, image);
    const [msg] = await env.waitForReceived(1);
    expect(msg!.text).toBe("what is in this picture?");
    expect(msg!.attachments).toHaveLength(1);
    expect(msg!.attachments![0]).toMatchObject({
      kind: "image",
      fileName: "cat.png",
      mimeType: "image/png",
      sizeBytes: png.length,
    });
    expect(msg!.attachments![0]!.path.startsWith(env.cacheDir)).toBe(true);
  });
});

describe("Matrix adapter: invites and encryption", () => {
  it("joins when an allowed user invites it and declines a stranger's invite", async () => {
    const { fake } = env;
    await env.start();
    const fromAlice = fake.createRoom({ members: [ALICE], bot: "invite", isDirectInvite: true });
    const fromMallory = fake.createRoom({ members: [MALLORY], bot: "invite" });
    await fake.waitFor(() => fake.state.membership(fromAlice, fake.botUserId)?.membership === "join");
    await fake.waitFor(() => fake.state.membership(fromMallory, fake.botUserId)?.membership === "leave");
    // The accepted DM is recorded in m.direct, and a message there is a DM turn.
    const direct = await fake.waitFor(() => fake.state.accountData.get("m.direct")?.content);
    expect(direct).toEqual({ [ALICE]: [fromAlice] });
    fake.userSends(fromAlice, ALICE, "thanks for joining");
    const [msg] = await env.waitForReceived(1);
    expect(msg).toMatchObject({ chat: { chatId: fromAlice }, chatType: "dm" });
  });

  it("handles invites that arrived while it was offline once it starts", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], bot: "invite" });
    await env.start();
    await fake.waitFor(() => fake.state.membership(room, fake.botUserId)?.membership === "join");
  });

  it("says once per encrypted room that it cannot read it, and never sends plaintext replies there", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], encrypted: true, direct: true });
    const adapter = await env.start();
    const encrypted = fixture<{ type: string; content: Record<string, unknown> }>("encrypted");
    fake.injectEvent(room, { type: encrypted.type, sender: ALICE, content: encrypted.content });
    fake.injectEvent(room, { type: encrypted.type, sender: ALICE, content: encrypted.content });
    const [notice] = await fake.waitForMessages(1, room);
    expect(notice!.content["msgtype"]).toBe("m.notice");
    expect(String(notice!.content["body"])).toContain("end-to-end encrypted");
    await expect(
      adapter.send({ platform: "matrix", chatId: room }, { text: "secret", idempotencyKey: key("e2e") }),
    ).rejects.toThrow(/encrypted/);
    // After a restart it still remembers it already told this room.
    await env.start();
    fake.injectEvent(room, { type: encrypted.type, sender: ALICE, content: encrypted.content });
    // A plaintext marker after it (a client without encryption could send one): once it is through,
    // a second notice would have been sent already.
    fake.userSends(room, ALICE, "marker");
    await env.waitForReceived(1);
    await env.adapter!.stop();
    expect(fake.messages(room)).toHaveLength(1);
    expect(env.received.map((m) => m.text)).toEqual(["marker"]);
  });
});

describe("Matrix adapter: start and errors", () => {
  it("rejects start with a PlatformError naming MATRIX_ACCESS_TOKEN when the token is refused", async () => {
    const err = await env.start({ accessToken: "wrong-token" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as PlatformError).message).toContain("MATRIX_ACCESS_TOKEN");
    expect((err as PlatformError).code).toBe("platform_auth_failed");
  });
});
