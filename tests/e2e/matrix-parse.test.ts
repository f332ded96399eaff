/**
 * The Matrix adapter's pure parts on real-shaped payloads: event → InboundMessage (mentions, reply
 * fallbacks, threads, skipped kinds) and Markdown → message content. The end-to-end files prove the same
 * through the SDK; these pin the edge cases.
 */
import { describe, expect, it } from "vitest";
import { chunkMarkdown, editContent, relationFor, textContent } from "../../adapters/matrix/format.js";
import { findMention, parseEvent, stripReplyFallback } from "../../adapters/matrix/parse.js";
import type { RoomFacts } from "../../adapters/matrix/types.js";
import { fixture } from "./matrix-env.js";

const bot = { userId: "@herald:localhost", displayName: "Herald" };
const group: RoomFacts = { roomId: "!team:localhost", isDirect: false, senderName: "Alice" };
const event = (content: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "m.room.message",
  event_id: "$e1",
  sender: "@alice:localhost",
  origin_server_ts: 1732190000000,
  content,
  ...extra,
});
const text = (body: string) => event({ msgtype: "m.text", body });

describe("parseEvent", () => {
  it("reads an Element-style mention pill and strips the leading name", () => {
    const result = parseEvent(fixture("mention-pill"), group, bot);
    expect(result).toMatchObject({
      kind: "message",
      message: { mentioned: true, text: "what is the capital of France?", chatType: "group" },
    });
  });

  it("counts the display name, the user id and m.mentions as mentions, and nothing else", () => {
    const mentioned = (body: string) =>
      (parseEvent(text(body), group, bot) as { message: { mentioned: boolean } }).message.mentioned;
    expect(mentioned("thanks Herald!")).toBe(true);
    expect(mentioned("ask @herald:localhost about it")).toBe(true);
    expect(mentioned("the heraldry society meets today")).toBe(false);
    expect(mentioned("no bots here")).toBe(false);
    const intentional = parseEvent(
      event({ msgtype: "m.text", body: "hey you", "m.mentions": { user_ids: ["@herald:localhost"] } }),
      group,
      bot,
    );
    expect(intentional).toMatchObject({ message: { mentioned: true } });
  });

  it("uses the bot's per-room display name too", () => {
    const facts = { ...group, botRoomName: "Assistant" };
    expect(parseEvent(text("Assistant, /status"), facts, bot)).toMatchObject({
      message: { mentioned: true, text: "/status" },
    });
  });

  it("drops the quoted fallback of a reply and marks a reply to the bot as addressed", () => {
    const raw = fixture("reply-to-bot");
    expect(parseEvent(raw, { ...group, repliedToSender: "@herald:localhost" }, bot)).toMatchObject({
      message: { mentioned: true, text: "and of Italy?" },
    });
    expect(parseEvent(raw, { ...group, repliedToSender: "@bob:localhost" }, bot)).toMatchObject({
      message: { mentioned: false, text: "and of Italy?" },
    });
    expect(stripReplyFallback("> <@a:b> one\n> two\n\nreal text")).toBe("real text");
    expect(stripReplyFallback("no quote")).toBe("no quote");
  });

  it("puts thread messages in a chat with the thread root as threadId", () => {
    const raw = JSON.parse(JSON.stringify(fixture("thread-message")).replaceAll("$ROOT", "$root1"));
    expect(parseEvent(raw, group, bot)).toMatchObject({
      message: {
        chat: { platform: "matrix", chatId: "!team:localhost", threadId: "$root1" },
        mentioned: true,
      },
    });
  });

  it("is always mentioned in a DM", () => {
    expect(parseEvent(text("hello"), { ...group, isDirect: true }, bot)).toMatchObject({
      message: { chatType: "dm", mentioned: true },
    });
  });

  it("skips its own events, notices, edits, unknown types and malformed payloads", () => {
    const reason = (raw: Record<string, unknown>) =>
      (parseEvent(raw, group, bot) as { reason?: string }).reason;
    expect(reason(event({ msgtype: "m.text", body: "x" }, { sender: "@herald:localhost" }))).toBe("own");
    expect(reason(event({ msgtype: "m.notice", body: "another bot" }))).toBe("notice");
    expect(
      reason(
        event({
          msgtype: "m.text",
          body: "* fixed",
          "m.relates_to": { rel_type: "m.replace", event_id: "$x" },
        }),
      ),
    ).toBe("edit");
    expect(reason(event({ msgtype: "m.location", body: "geo", geo_uri: "geo:1,2" }))).toBe("unsupported");
    expect(reason(fixture("malformed"))).toBe("malformed");
    expect(reason(event({ msgtype: "m.text" }))).toBe("malformed");
    expect(reason({ ...text("x"), event_id: 42 })).toBe("malformed");
    expect(reason(fixture("encrypted"))).toBe("not_message");
    expect(reason(event({ msgtype: "m.image", body: "pic.png", url: "https://not-mxc" }))).toBe("malformed");
  });

  it("gives media a download reference and uses a separate body as the caption", () => {
    const result = parseEvent(fixture("image"), { ...group, isDirect: true }, bot);
    expect(result).toMatchObject({
      message: { text: "what is in this picture?" },
      media: {
        url: "mxc://localhost/MEDIA",
        kind: "image",
        fileName: "cat.png",
        mimeType: "image/png",
        sizeBytes: 68,
      },
    });
  });

  it("reads a mention in a media caption, and never in a bare file name", () => {
    const captioned = event({
      msgtype: "m.image",
      body: "Herald: what is this?",
      filename: "x.png",
      url: "mxc://localhost/a",
    });
    expect(parseEvent(captioned, group, bot)).toMatchObject({
      message: { mentioned: true, text: "what is this?" },
    });
    const bare = event({ msgtype: "m.file", body: "herald-notes.pdf", url: "mxc://localhost/b" });
    expect(parseEvent(bare, group, bot)).toMatchObject({
      message: { mentioned: false, text: "" },
      media: { fileName: "herald-notes.pdf" },
    });
  });

  it("findMention does not strip a name inside a longer word", () => {
    expect(findMention("Heraldic arms", undefined, bot.userId, ["Herald"])).toEqual({
      mentioned: false,
      text: "Heraldic arms",
    });
  });
});

describe("format", () => {
  it("keeps Markdown as body and renders HTML as formatted_body", () => {
    expect(textContent("# Title\n\n- one\n- two")).toMatchObject({
      msgtype: "m.text",
      body: "# Title\n\n- one\n- two",
      format: "org.matrix.custom.html",
    });
    expect(textContent("# Title\n\n- one\n- two").formatted_body).toBe(
      "<h1>Title</h1>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>",
    );
    expect(textContent("x", "notice").msgtype).toBe("m.notice");
  });

  it("chunks deterministically and within the limit", () => {
    const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${"lorem ".repeat(40)}`).join("\n\n");
    const a = chunkMarkdown(long, 1000);
    expect(a).toEqual(chunkMarkdown(long, 1000));
    expect(a.every((c) => c.length <= 1000)).toBe(true);
    expect(a.length).toBeGreaterThan(5);
  });

  it("builds m.replace edits and thread relations", () => {
    expect(editContent("$status", "new text")).toMatchObject({
      body: "* new text",
      "m.new_content": { body: "new text" },
      "m.relates_to": { rel_type: "m.replace", event_id: "$status" },
    });
    const thread = { platform: "matrix", chatId: "!r:localhost", threadId: "$root" };
    expect(relationFor(thread, undefined, "$prev")).toEqual({
      rel_type: "m.thread",
      event_id: "$root",
      is_falling_back: true,
      "m.in_reply_to": { event_id: "$prev" },
    });
    expect(relationFor({ platform: "matrix", chatId: "!r:localhost" }, undefined, "$prev")).toBeUndefined();
  });
});
