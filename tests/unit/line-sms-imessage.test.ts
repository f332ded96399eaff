/** LINE, SMS and iMessage parsing and formatting, from scrubbed real payloads. */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseMessage, readMessage } from "../../adapters/bluebubbles/parse.js";
import { buttonLabel, lineChunks, quickReply } from "../../adapters/line/format.js";
import { MalformedEventError, parseEvent, readEvent } from "../../adapters/line/parse.js";
import { markdownToPlainText } from "../../adapters/shared/plain-text.js";
import { smsChunks } from "../../adapters/sms/format.js";
import { keywordOf, mediaOf, parseInbound, readInbound } from "../../adapters/sms/parse.js";
import { loadConfig } from "../../app/config.js";

const fixture = (path: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "fixtures", path), "utf8")) as Record<
    string,
    unknown
  >;

describe("line events", () => {
  const events = fixture("line/group-mention.json")["events"] as unknown[];

  it("a group message mentioning the bot: addressed, the bot's mention removed, others kept, reply token in meta", () => {
    const message = parseEvent(readEvent(events[0]))!;
    expect(message).toMatchObject({
      messageId: "468789577898262530",
      chat: { platform: "line", chatId: "C66616d696c7900000000000000000000" },
      chatType: "group",
      sender: { id: "U616e6e00000000000000000000000000" },
      text: "what's on today? @Bob",
      mentioned: true,
      meta: { replyToken: "38ef843bde154d9b91c21320ffd17a0f", eventAt: "1692251666727" },
    });
  });

  it("a redelivered postback is a button message without a reply token; a follow event is nothing", () => {
    const click = parseEvent(readEvent(events[1]))!;
    expect(click).toMatchObject({
      text: "/approve 3f2a1b2c",
      viaButton: true,
      chatType: "dm",
      mentioned: true,
    });
    expect(click.meta).toBeUndefined();
    expect(parseEvent(readEvent(events[2]))).toBeUndefined();
  });

  it("an event without an id or timestamp is malformed", () => {
    expect(() => readEvent({ type: "message" })).toThrow(MalformedEventError);
  });

  it("replies: plain text, 5,000-character messages, quick-reply labels of 20", () => {
    expect(lineChunks("## Plan\n- **one** [docs](https://x.y)")).toEqual(["Plan\n• one docs (https://x.y)"]);
    expect(lineChunks("word ".repeat(2000)).every((c) => c.length <= 5000)).toBe(true);
    expect(buttonLabel("Always allow this command")).toHaveLength(20);
    const items = quickReply(
      [[{ label: "Yes", data: "/approve 1" }], [{ label: "No", data: "/deny 1" }]],
      (d) => d,
    ).items;
    expect(items?.map((i) => i.action)).toEqual([
      { type: "postback", label: "Yes", data: "/approve 1", displayText: "Yes" },
      { type: "postback", label: "No", data: "/deny 1", displayText: "No" },
    ]);
  });
});

describe("sms webhooks", () => {
  it("an MMS: a DM of the sender's number with its media", () => {
    const inbound = readInbound(fixture("sms/mms.json") as Record<string, string>);
    expect(parseInbound(inbound)).toMatchObject({
      messageId: "MM0a1b2c3d4e5f60718293a4b5c6d7e8f9",
      chat: { platform: "sms", chatId: "+15550000042" },
      chatType: "dm",
      text: "What is this plant?",
      mentioned: true,
    });
    expect(mediaOf(inbound)).toEqual([
      { url: expect.stringContaining("/Media/ME0a1b"), mimeType: "image/jpeg" },
    ]);
  });

  it("carrier keywords are whole messages, any case", () => {
    expect(["STOP", "stop", " Unsubscribe ", "quit."].map(keywordOf)).toEqual([
      "stop",
      "stop",
      "stop",
      "stop",
    ]);
    expect(["START", "unstop", "Yes"].map(keywordOf)).toEqual(["start", "start", "start"]);
    expect(["help", "INFO"].map(keywordOf)).toEqual(["help", "help"]);
    expect(["please stop that", "helpful", ""].map(keywordOf)).toEqual([undefined, undefined, undefined]);
  });

  it("replies: plain text in messages of at most the configured size", () => {
    const chunks = smsChunks(`**Bold** and \`code\`\n\n${"word ".repeat(500)}`, 600);
    expect(chunks[0]!.startsWith("Bold and code")).toBe(true);
    expect(chunks.every((c) => c.length <= 600)).toBe(true);
  });
});

describe("bluebubbles messages", () => {
  const event = fixture("bluebubbles/new-message-group.json");

  it("a group message using Herald's name: addressed, the name removed", () => {
    const message = parseMessage(readMessage(event["data"]), ["herald"])!;
    expect(message).toMatchObject({
      chat: { platform: "bluebubbles", chatId: "iMessage;+;chat618207350218342916" },
      chatType: "group",
      sender: { id: "ann@example.com" },
      text: "can you summarise the thread?",
      mentioned: true,
    });
  });

  it("a DM is addressed; own messages and tapbacks are nothing; a name inside a word does not count", () => {
    const data = event["data"] as Record<string, unknown>;
    const dm = { ...data, chats: [{ guid: "iMessage;-;+15550000042" }], text: "hi" };
    expect(parseMessage(readMessage(dm), ["herald"])).toMatchObject({ chatType: "dm", mentioned: true });
    expect(parseMessage(readMessage({ ...dm, isFromMe: true }), ["herald"])).toBeUndefined();
    expect(
      parseMessage(readMessage({ ...dm, associatedMessageGuid: "p:0/X", associatedMessageType: "like" }), [
        "herald",
      ]),
    ).toBeUndefined();
    const group = parseMessage(readMessage({ ...data, text: "the heralds are here" }), ["herald"])!;
    expect(group.mentioned).toBe(false);
  });
});

describe("plain text", () => {
  it("drops Markdown markers and fences, keeps the words and code lines", () => {
    expect(markdownToPlainText("# Title\n*it* __b__ ~~s~~\n```js\nconst a = 1;\n```\n* item")).toBe(
      "Title\nit b s\nconst a = 1;\n• item",
    );
  });
});

describe("config sections", () => {
  const load = (env: Record<string, string>) => () => loadConfig({ env: { HERALD_HOME: tmpdir(), ...env } });

  it("a half-configured platform names the missing variable and the fix", () => {
    expect(load({ LINE_CHANNEL_SECRET: "s" })).toThrow(
      /LINE_CHANNEL_SECRET and LINE_CHANNEL_ACCESS_TOKEN go together/,
    );
    expect(
      load({
        TWILIO_ACCOUNT_SID: `AC${"f".repeat(32)}`,
        TWILIO_AUTH_TOKEN: "t",
        TWILIO_FROM_NUMBER: "+15550000001",
      }),
    ).toThrow(/TWILIO_WEBHOOK_URL/);
    expect(
      load({
        TWILIO_ACCOUNT_SID: "SK123",
        TWILIO_AUTH_TOKEN: "t",
        TWILIO_FROM_NUMBER: "+15550000001",
        TWILIO_WEBHOOK_URL: "https://h/webhooks/sms",
      }),
    ).toThrow(/starts with AC/);
    expect(load({ BLUEBUBBLES_URL: "https://bb.example.com" })).toThrow(/BLUEBUBBLES_PASSWORD/);
  });

  it("a complete section parses, with the defaults", () => {
    const config = load({
      BLUEBUBBLES_URL: "https://bb.example.com",
      BLUEBUBBLES_PASSWORD: "pw",
      BLUEBUBBLES_NAMES: "herald,bot",
    })();
    expect(config.platforms["bluebubbles"]).toMatchObject({
      url: "https://bb.example.com",
      names: ["herald", "bot"],
      privateApi: false,
      requireMention: true,
    });
    const sms = load({
      TWILIO_ACCOUNT_SID: `AC${"f".repeat(32)}`,
      TWILIO_AUTH_TOKEN: "t",
      TWILIO_FROM_NUMBER: "+15550000001",
      TWILIO_WEBHOOK_URL: "https://h.example.com/webhooks/sms",
    })();
    expect(sms.platforms["sms"]).toMatchObject({ apiUrl: "https://api.twilio.com", maxChars: 1600 });
  });
});
