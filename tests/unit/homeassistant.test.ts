/**
 * The Home Assistant platform's pure parts: a conversation request (Herald's shape and the Webhook
 * Conversation integration's) as an inbound message, Markdown as speech, and where notifications go.
 */
import { describe, expect, it } from "vitest";
import { toSpeech } from "../../adapters/homeassistant/format.js";
import { targetOf } from "../../adapters/homeassistant/notify.js";
import { DEFAULT_SENDER, toInbound } from "../../adapters/homeassistant/parse.js";
import { conversationRequestSchema } from "../../adapters/homeassistant/types.js";

const parse = (body: unknown) => conversationRequestSchema.safeParse(body);

describe("a conversation request", () => {
  it("becomes a DM of the conversation from the Home Assistant user", () => {
    const request = parse({
      text: " is the kettle on? ",
      conversation_id: "01JXYZ",
      language: "en",
      device_id: "dev1",
      user_id: "anna",
    });
    expect(request.success).toBe(true);
    const made = toInbound(request.data!, "m1", "new-conv");
    expect(made).toMatchObject({
      conversationId: "01JXYZ",
      inbound: {
        platform: "homeassistant",
        messageId: "m1",
        chat: { platform: "homeassistant", chatId: "01JXYZ" },
        chatType: "dm",
        sender: { id: "anna" },
        text: "is the kettle on?",
        mentioned: true,
        meta: { language: "en", device_id: "dev1" },
      },
    });
  });

  it("takes the Webhook Conversation integration's shape; without a conversation or user, new ones", () => {
    const request = parse({
      query: "hello",
      messages: [],
      exposed_entities: "[]",
      user_id: null,
      conversation_id: null,
    });
    const made = toInbound(request.data!, "m2", "new-conv");
    expect(made).toMatchObject({
      conversationId: "new-conv",
      inbound: { text: "hello", sender: { id: DEFAULT_SENDER } },
    });
  });

  it("refuses an empty text and a conversation id that cannot be a chat id", () => {
    expect(parse({ text: "  " }).success).toBe(false);
    expect(parse({ conversation_id: "x" }).success).toBe(false);
    expect(toInbound(parse({ text: "hi", conversation_id: "a:b" }).data!, "m3", "n")).toEqual({
      error: "'conversation_id' may hold 1–128 letters, digits, '.', '_' or '-'",
    });
  });
});

describe("speech", () => {
  it("drops Markdown marks and keeps the words", () => {
    expect(toSpeech("**Done**: the `light.kitchen` is *on*.\n\n- one\n- [two](https://x)\n\n## Head")).toBe(
      "Done: the light.kitchen is on.\n\none\ntwo\n\nHead",
    );
    expect(toSpeech("```sh\nls -la\n```")).toBe("ls -la");
    expect(toSpeech("snake_case_name stays")).toBe("snake_case_name stays");
    expect(toSpeech("⚠️ I want to run a command ✅")).toBe("I want to run a command");
  });
});

describe("notifications", () => {
  it("go to the notify service a chat names, else the configured one, else persistent", () => {
    expect(targetOf("notify.mobile_app_phone", undefined)).toBe("notify.mobile_app_phone");
    expect(targetOf("01JXYZ", "notify.mobile_app_tablet")).toBe("notify.mobile_app_tablet");
    expect(targetOf("01JXYZ", undefined)).toBeUndefined();
  });
});
