/** Parsing Teams activities and Google Chat events, and their chat ids and text formats. */
import { describe, expect, it } from "vitest";
import { toChatText } from "../../adapters/googlechat/format.js";
import { parseEvent, readEvent } from "../../adapters/googlechat/parse.js";
import {
  parseActivity,
  readActivity,
  splitConversation,
  splitTeamsChatId,
} from "../../adapters/teams/parse.js";

const activity = (over: Record<string, unknown>) =>
  readActivity({
    type: "message",
    id: "1700000000123",
    serviceUrl: "https://smba.trafficmanager.net/emea/",
    channelId: "msteams",
    from: { id: "29:1ann", name: "Ann", aadObjectId: "AAAA-1" },
    recipient: { id: "28:app", name: "Herald" },
    conversation: { id: "19:abc@thread.tacv2;messageid=1700000000000", conversationType: "channel" },
    text: "<at>Herald</at> hello <at>Bob</at> , see this",
    entities: [{ type: "mention", text: "<at>Herald</at>", mentioned: { id: "28:app" } }],
    ...over,
  });

describe("teams parsing", () => {
  it("a channel mention: the reply chain is the thread, the bot's mention goes, others stay as names", () => {
    expect(parseActivity(activity({}))).toMatchObject({
      platform: "teams",
      messageId: "19:abc@thread.tacv2;messageid=1700000000000|1700000000123",
      chat: { chatId: "19:abc@thread.tacv2", threadId: "1700000000000" },
      chatType: "group",
      sender: { id: "AAAA-1", name: "Ann" },
      text: "hello Bob, see this",
      mentioned: true,
    });
  });

  it("a channel message without the bot's mention is not addressed; a personal chat always is", () => {
    expect(parseActivity(activity({ entities: [], text: "just chatting" }))?.mentioned).toBe(false);
    const dm = parseActivity(
      activity({ entities: [], text: "hi", conversation: { id: "a:1xyz", conversationType: "personal" } }),
    );
    expect(dm).toMatchObject({ chatType: "dm", mentioned: true, chat: { chatId: "a:1xyz" } });
  });

  it("a card click is the button's data, and the bot's own messages and other activities are ignored", () => {
    const click = parseActivity(
      activity({ text: undefined, entities: [], value: { heraldButton: "/approve 0a1b" } }),
    );
    expect(click).toMatchObject({ text: "/approve 0a1b", viaButton: true, mentioned: true });
    expect(parseActivity(activity({ from: { id: "28:app" } }))).toBeUndefined();
    expect(parseActivity(activity({ type: "conversationUpdate" }))).toBeUndefined();
  });

  it("a malformed activity names the missing field", () => {
    expect(() => readActivity({ type: "message" })).toThrow(/malformed activity: serviceUrl/);
  });

  it("chat ids with colons split at the reply chain only", () => {
    expect(splitTeamsChatId("19:abc@thread.tacv2:1700000000000")).toEqual({
      chatId: "19:abc@thread.tacv2",
      threadId: "1700000000000",
    });
    expect(splitTeamsChatId("a:1xyz")).toEqual({ chatId: "a:1xyz" });
    expect(splitTeamsChatId("19:group@thread.v2")).toEqual({ chatId: "19:group@thread.v2" });
    expect(splitConversation("19:abc@thread.tacv2;messageid=42")).toEqual({
      chatId: "19:abc@thread.tacv2",
      threadId: "42",
    });
  });
});

const event = (over: Record<string, unknown>) =>
  readEvent({
    type: "MESSAGE",
    eventTime: "2026-11-29T01:00:00Z",
    message: {
      name: "spaces/S/messages/M1",
      text: "@Herald what now",
      argumentText: " what now",
      thread: { name: "spaces/S/threads/T1" },
      sender: { name: "users/1001", displayName: "Ann", type: "HUMAN" },
    },
    user: { name: "users/1001", displayName: "Ann", type: "HUMAN" },
    space: { name: "spaces/S", type: "ROOM", spaceType: "SPACE" },
    ...over,
  });

describe("google chat parsing", () => {
  it("a space message: the thread is the session, the mention is left out, the user id is the number", () => {
    expect(parseEvent(event({}))).toMatchObject({
      messageId: "spaces/S/messages/M1",
      chat: { platform: "googlechat", chatId: "spaces/S", threadId: "T1" },
      chatType: "group",
      sender: { id: "1001", name: "Ann" },
      text: "what now",
    });
  });

  it("a DM has no thread; a click is the button's data; added-to-space events are ignored", () => {
    const dm = parseEvent(event({ space: { name: "spaces/D", spaceType: "DIRECT_MESSAGE" } }));
    expect(dm?.chat).toEqual({ platform: "googlechat", chatId: "spaces/D" });
    const click = parseEvent(
      event({
        type: "CARD_CLICKED",
        action: { actionMethodName: "heraldButton", parameters: [{ key: "data", value: "/deny" }] },
      }),
    );
    expect(click).toMatchObject({ text: "/deny", viaButton: true });
    expect(parseEvent(event({ type: "ADDED_TO_SPACE" }))).toBeUndefined();
  });

  it("Markdown becomes Chat's format outside code", () => {
    expect(toChatText("**bold** and [link](https://x.org) `**raw**`\n# Title")).toBe(
      "*bold* and <https://x.org|link> `**raw**`\n*Title*",
    );
  });
});
