/**
 * The WhatsApp adapter at the socket boundary: real-shaped Baileys messages in through a fake socket
 * (Baileys' own event buffer), what the gateway's handler receives, and what the adapter sends back.
 */
import { readFileSync, statSync } from "node:fs";
import type { WAMessage } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import { fixture, withId, withText } from "../fakes/whatsapp/index.js";
import { type FakeMediaServer, startFakeMediaServer } from "../fakes/whatsapp/media-server.js";
import { type EnvOptions, type WhatsAppEnv, whatsAppEnv } from "./whatsapp-env.js";

let env: WhatsAppEnv | undefined;
let media: FakeMediaServer | undefined;

afterEach(async () => {
  await env?.close();
  await media?.close();
  env = undefined;
  media = undefined;
});

async function started(opts: EnvOptions = {}): Promise<WhatsAppEnv> {
  env = await whatsAppEnv(opts);
  await env.start();
  await env.fake.waitFor(() => env!.adapter.status().state === "running", "the connection to open");
  return env;
}

/** Delivers messages and waits until the handler saw `count` messages in total. */
async function deliver(e: WhatsAppEnv, messages: WAMessage[], count: number) {
  e.fake.current.deliver(messages);
  await e.fake.waitFor(() => e.received.length >= count, `${count} inbound messages`);
}

/** Delivers, then proves nothing reached the handler by delivering a marker message after it. */
async function deliverIgnored(e: WhatsAppEnv, messages: WAMessage[], type: "notify" | "append" = "notify") {
  const before = e.received.length;
  e.fake.current.deliver(messages, type);
  await deliver(e, [withText(withId(fixture("dm-text"), `MARK${before}`), "marker")], before + 1);
  expect(e.received.map((m) => m.text).slice(before)).toEqual(["marker"]);
}

describe("WhatsApp adapter: inbound", () => {
  it("turns a DM into an InboundMessage keyed by the contact's JID and phone number", async () => {
    const e = await started();
    await deliver(e, [fixture("dm-text")], 1);
    expect(e.received[0]).toMatchObject({
      platform: "whatsapp",
      messageId: "3EB0A1B2C3D4E5F60718",
      chat: { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" },
      chatType: "dm",
      sender: { id: "15551234567", name: "Alice" },
      text: "Hello Herald!",
      mentioned: true,
      replyToId: "3EB0A1B2C3D4E5F60718",
      sentAt: 1718035200_000,
    });
  });

  it("keeps one chat per contact when WhatsApp addresses the DM by LID", async () => {
    const e = await started();
    await deliver(e, [fixture("dm-lid")], 1);
    expect(e.received[0]?.chat.chatId).toBe("15551234567@s.whatsapp.net");
    expect(e.received[0]?.sender.id).toBe("15551234567");
  });

  it("unwraps disappearing-message content", async () => {
    const e = await started();
    await deliver(e, [fixture("dm-ephemeral")], 1);
    expect(e.received[0]?.text).toBe("This chat has disappearing messages");
  });

  it("marks a message read only after the gateway recorded it, and not when recording failed", async () => {
    const e = await started();
    let release: (() => void) | undefined;
    e.respond = () => new Promise((resolve) => (release = () => resolve("accepted")));
    await deliver(e, [fixture("dm-text")], 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(e.fake.current.reads).toEqual([]);
    release!();
    await e.fake.waitFor(() => e.fake.current.reads.length === 1, "the read receipt");
    expect(e.fake.current.reads[0]).toMatchObject({
      id: "3EB0A1B2C3D4E5F60718",
      remoteJid: "15551234567@s.whatsapp.net",
    });

    e.respond = () => Promise.reject(new Error("disk full"));
    await deliver(e, [withId(fixture("dm-text"), "3EB0NOTRECORDED00001")], 2);
    e.respond = async () => "accepted";
    await deliver(e, [withId(fixture("dm-text"), "3EB0AFTERWARDS000001")], 3);
    await e.fake.waitFor(() => e.fake.current.reads.length === 2, "the second read receipt");
    expect(e.fake.current.reads.map((k) => k.id)).toEqual(["3EB0A1B2C3D4E5F60718", "3EB0AFTERWARDS000001"]);
    expect(e.lines.some((l) => l["msg"] === "whatsapp message not recorded")).toBe(true);
  });

  it("does not mark ignored group chatter read (the owner's unread counts stay)", async () => {
    const e = await started();
    e.respond = async () => "ignored";
    await deliver(e, [fixture("group-chatter")], 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(e.fake.current.reads).toEqual([]);
  });

  it("in groups sets `mentioned` only for a mention or a reply to the bot, and strips the mention", async () => {
    const e = await started();
    await deliver(
      e,
      [
        "group-chatter",
        "group-mention",
        "group-mention-lid",
        "group-reply-to-bot",
        "group-reply-to-other",
      ].map(fixture),
      5,
    );
    const summary = e.received.map((m) => [m.chatType, m.chat.chatId, m.sender.id, m.mentioned, m.text]);
    expect(summary).toEqual([
      ["group", "120363041234567890@g.us", "15557654321", false, "lunch anyone?"],
      ["group", "120363041234567890@g.us", "15557654321", true, "what is the capital of France?"],
      ["group", "120363041234567890@g.us", "15557654321", true, "summarise the thread"],
      ["group", "120363041234567890@g.us", "15557654321", true, "and of Germany?"],
      ["group", "120363041234567890@g.us", "15557654321", false, "sounds good"],
    ]);
  });

  it("ignores status broadcasts, reactions, the account's own messages and history sync", async () => {
    const e = await started();
    await deliverIgnored(e, [fixture("status-broadcast"), fixture("reaction"), fixture("own-message")]);
    await deliverIgnored(
      e,
      [withId(fixture("dm-text"), "3EB0HISTORY000000001"), fixture("group-mention")],
      "append",
    );
  });

  it("answers the owner's 'message yourself' chat only when configured, and never its own replies", async () => {
    const off = await started();
    await deliverIgnored(off, [fixture("self-chat")]);
    await off.close();

    const e = await started({ env: { WHATSAPP_SELF_CHAT: "true" } });
    await deliver(e, [fixture("self-chat")], 1);
    expect(e.received[0]).toMatchObject({
      chat: { chatId: "15550001111@s.whatsapp.net" },
      chatType: "dm",
      sender: { id: "15550001111" },
      text: "remind me what I asked yesterday",
    });
    // The reply lands in the same chat; even if WhatsApp delivered it back as new, it is not answered.
    const sent = await e.adapter.send(e.received[0]!.chat, {
      text: "You asked about tea.",
      idempotencyKey: "self-1",
    });
    const echo = withText(withId(fixture("self-chat"), sent.messageIds[0]!), "You asked about tea.");
    await deliverIgnored(e, [echo]);
  });

  it("skips a malformed payload with a warning and keeps going", async () => {
    const e = await started();
    const broken = { message: { conversation: "no key" } } as unknown as WAMessage;
    await deliverIgnored(e, [broken]);
    expect(e.lines.some((l) => l["msg"] === "whatsapp message skipped" && l["reason"] === "malformed")).toBe(
      true,
    );
  });
});

describe("WhatsApp adapter: media in", () => {
  async function withMedia(name: string, data: Buffer, type: "image" | "audio" | "document", size?: number) {
    media ??= await startFakeMediaServer();
    const up = await media.upload(data, type);
    const msg = fixture(name);
    const m = msg.message!;
    const inner = m.imageMessage ?? m.audioMessage ?? m.documentWithCaptionMessage?.message?.documentMessage;
    Object.assign(inner!, { ...up, fileLength: size ?? up.fileLength, directPath: undefined });
    return msg;
  }

  it("downloads and decrypts an image, a voice note and a document into the cache", async () => {
    const e = await started();
    const image = Buffer.from("\xff\xd8\xff\xe0 a small jpeg", "latin1");
    const voice = Buffer.from("OggS voice bytes");
    const pdf = Buffer.from("%PDF-1.7 the quarterly report");
    await deliver(
      e,
      [
        await withMedia("image-dm", image, "image"),
        await withMedia("voice-note", voice, "audio"),
        await withMedia("document", pdf, "document"),
      ],
      3,
    );
    const [img, ptt, doc] = e.received;
    expect(img?.text).toBe("what is in this picture?");
    expect(img?.attachments?.[0]).toMatchObject({
      kind: "image",
      mimeType: "image/jpeg",
      sizeBytes: image.length,
    });
    expect(readFileSync(img!.attachments![0]!.path)).toEqual(image);
    expect(ptt?.attachments?.[0]).toMatchObject({ kind: "voice", mimeType: "audio/ogg; codecs=opus" });
    expect(readFileSync(ptt!.attachments![0]!.path)).toEqual(voice);
    expect(doc?.text).toBe("summarise this please");
    expect(doc?.attachments?.[0]).toMatchObject({ kind: "document", fileName: "Q2 report.pdf" });
    expect(readFileSync(doc!.attachments![0]!.path)).toEqual(pdf);
    expect(statSync(doc!.attachments![0]!.path).mode & 0o077).toBe(0);
  });

  it("does not download media of unaddressed group chatter", async () => {
    const e = await started();
    const photo = await withMedia("image-dm", Buffer.from("holiday photo"), "image");
    photo.key = {
      ...photo.key,
      remoteJid: "120363041234567890@g.us",
      participant: "15557654321@s.whatsapp.net",
    };
    await deliver(e, [photo], 1);
    expect(e.received[0]).toMatchObject({ chatType: "group", mentioned: false });
    expect(e.received[0]?.attachments).toBeUndefined();
    expect(media!.requests).toEqual([]);
  });

  it("leaves out media over the size cap, whether announced or discovered while downloading", async () => {
    const e = await started({ env: { HERALD_MEDIA_MAX_BYTES: "1000" } });
    const big = Buffer.alloc(5000, 7);
    await deliver(e, [await withMedia("image-dm", big, "image", 5000)], 1);
    expect(e.received[0]?.attachments).toBeUndefined();
    expect(e.received[0]?.text).toMatch(
      /^what is in this picture\?\n\(image not received: 4\.9 KB is over the 1000 bytes limit\)$/,
    );
    const downloadsBefore = media!.requests.length;
    expect(downloadsBefore).toBe(0);
    // The sender's client claims a small size; the download stops at the cap anyway.
    await deliver(e, [withId(await withMedia("voice-note", big, "audio", 100), "3EB0LIAR000000000001")], 2);
    expect(e.received[1]?.attachments).toBeUndefined();
    expect(e.received[1]?.text).toMatch(/voice note not received: it is larger than/);
  });
});

describe("WhatsApp adapter: send", () => {
  it("renders Markdown, splits long replies under 4,000 characters, and resumes without re-sending", async () => {
    const e = await started();
    const chat = { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" };
    const paragraph = (n: number) => `**Part ${n}.** ${"lorem ipsum dolor sit amet ".repeat(60).trim()}`;
    const text = [1, 2, 3, 4].map(paragraph).join("\n\n");
    const first = await e.adapter.send(chat, { text, idempotencyKey: "long-1" });
    const texts = e.fake.texts();
    expect(texts.length).toBeGreaterThan(1);
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(4000);
    expect(texts.join("\n\n")).toContain("*Part 4.* lorem");
    expect(texts.join("")).not.toContain("**");
    // A retry of the same outbox item from chunk 1 re-sends only what was not confirmed, with the same ids.
    const retry = await e.adapter.send(chat, { text, idempotencyKey: "long-1" }, { fromChunk: 1 });
    expect(retry.messageIds).toEqual(first.messageIds.slice(1));
    expect(e.fake.sent().map((s) => s.options?.messageId)).toEqual([
      ...first.messageIds,
      ...first.messageIds.slice(1),
    ]);
  });

  it("quotes the message being answered in groups (first chunk only), not in DMs", async () => {
    const e = await started();
    await deliver(e, [fixture("group-mention")], 1);
    const inbound = e.received[0]!;
    await e.adapter.send(inbound.chat, {
      text: `${"a ".repeat(2500)}\n\n${"b ".repeat(2500)}`,
      replyToId: inbound.replyToId,
      inboundMeta: inbound.meta,
      idempotencyKey: "g-1",
    });
    const [one, two] = e.fake.sent();
    expect(one?.jid).toBe("120363041234567890@g.us");
    expect(one?.options?.quoted?.key).toMatchObject({
      id: "3EB0C0FFEE9876543210",
      participant: "15557654321@s.whatsapp.net",
    });
    expect(two?.options?.quoted).toBeUndefined();

    await e.adapter.send(
      { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" },
      { text: "hi", replyToId: "3EB0A1B2C3D4E5F60718", idempotencyKey: "d-1" },
    );
    expect(e.fake.sent().at(-1)?.options?.quoted).toBeUndefined();
  });

  it("quotes from the inbound meta when the original is no longer in memory (after a restart)", async () => {
    const e = await started();
    await e.adapter.send(
      { platform: "whatsapp", chatId: "120363041234567890@g.us" },
      {
        text: "Berlin.",
        replyToId: "3EB0OLD0000000000001",
        inboundMeta: {
          jid: "120363041234567890@g.us",
          participant: "15557654321@s.whatsapp.net",
          quote: "and Germany?",
        },
        idempotencyKey: "g-2",
      },
    );
    expect(e.fake.sent()[0]?.options?.quoted).toEqual({
      key: {
        remoteJid: "120363041234567890@g.us",
        id: "3EB0OLD0000000000001",
        fromMe: false,
        participant: "15557654321@s.whatsapp.net",
      },
      message: { conversation: "and Germany?" },
    });
  });

  it("sends files as images or documents, and accepts a bare phone number as the chat", async () => {
    const e = await started();
    await e.adapter.send(
      { platform: "whatsapp", chatId: "+1 555 123 4567" },
      {
        text: "Here you go.",
        files: [
          { path: "/tmp/chart.png", caption: "the chart" },
          { path: "/tmp/data.csv", mimeType: "text/csv" },
        ],
        idempotencyKey: "f-1",
      },
    );
    const sent = e.fake.sent();
    expect(sent.map((s) => s.jid)).toEqual(Array(3).fill("15551234567@s.whatsapp.net"));
    expect(sent[0]?.content).toMatchObject({ text: "Here you go." });
    expect(sent[1]?.content).toEqual({
      image: { url: "/tmp/chart.png" },
      mimetype: "image/png",
      caption: "the chart",
    });
    expect(sent[2]?.content).toEqual({
      document: { url: "/tmp/data.csv" },
      mimetype: "text/csv",
      fileName: "data.csv",
    });
  });

  it("reports failures the outbox can act on", async () => {
    const e = await started({ options: { sendWaitMs: 50, backoff: { baseMs: 60_000 } } });
    const chat = { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" };
    e.fake.failSends = { count: 1, statusCode: 429 };
    const limited = await e.adapter
      .send(chat, { text: "x", idempotencyKey: "e-1" })
      .catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(PlatformError);
    expect(limited).toMatchObject({ retryable: true, retryAfterMs: 30_000, code: "platform_rate_limited" });

    await e.fake.current.drop(428);
    const offline = await e.adapter
      .send(chat, { text: "x", idempotencyKey: "e-2" })
      .catch((err: unknown) => err);
    expect(offline).toMatchObject({ retryable: true });
    expect((offline as Error).message).toMatch(/reconnecting/);
  });

  it("holds a send while the connection comes back, then delivers it", async () => {
    const e = await started({ options: { backoff: { baseMs: 100 } } });
    await e.fake.current.drop(428);
    const result = await e.adapter.send(
      { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" },
      { text: "after the blip", idempotencyKey: "h-1" },
    );
    expect(result.messageIds).toHaveLength(1);
    expect(e.fake.sent().map((s) => [s.socket, s.content])).toEqual([
      [1, { text: "after the blip", linkPreview: null }],
    ]);
  });

  it("shows 'composing' (throttled per chat) and stays 'unavailable' after connecting", async () => {
    const e = await started();
    await e.fake.waitFor(() => e.fake.current.presence.length >= 1, "the initial presence");
    const chat = { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" };
    await e.adapter.sendTyping(chat);
    await e.adapter.sendTyping(chat);
    expect(e.fake.current.presence).toEqual([
      { type: "unavailable", jid: undefined },
      { type: "composing", jid: "15551234567@s.whatsapp.net" },
    ]);
  });
});
