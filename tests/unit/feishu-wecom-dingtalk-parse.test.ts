/**
 * The pure parts of the Feishu, WeCom and DingTalk adapters: Feishu's event verification and message
 * parsing (mentions, rich text with images), its domain choice; WeCom's encryption against an
 * independent implementation, its XML fields and message parsing; DingTalk's robot messages.
 */
import { describe, expect, it } from "vitest";
import { parseRobotMessage } from "../../adapters/dingtalk/parse.js";
import { feishuPlatform } from "../../adapters/feishu/module.js";
import { parseMessageEvent } from "../../adapters/feishu/parse.js";
import { RefusedRequest, verifyFeishu } from "../../adapters/feishu/webhook.js";
import { wecomDecrypt, wecomEncrypt } from "../../adapters/wecom/crypto.js";
import { MalformedEventError, parseMessage, readMessage } from "../../adapters/wecom/parse.js";
import { xmlField } from "../../adapters/wecom/xml.js";
import { loadConfig } from "../../app/config.js";
import { robotMessage } from "../fakes/dingtalk/index.js";
import {
  BOT_OPEN_ID,
  ENCRYPT_KEY,
  envelope,
  messageEvent,
  signedEvent,
  VERIFICATION_TOKEN,
} from "../fakes/feishu/index.js";
import { AES_KEY, CORP_ID, wecomEncrypt as fakeEncrypt } from "../fakes/wecom/index.js";

describe("feishu", () => {
  const verify = (body: string, headers: Record<string, string>) =>
    verifyFeishu(new Headers(headers), body, {
      encryptKey: ENCRYPT_KEY,
      verificationToken: VERIFICATION_TOKEN,
      maxSkewMs: 300_000,
      now: Date.now(),
    });

  it("verifies a signed event and refuses one whose body was changed after signing", () => {
    const { body, headers } = signedEvent(envelope("im.message.receive_v1", { x: 1 }));
    expect(verify(body, headers).header?.event_type).toBe("im.message.receive_v1");
    const tampered = body.replace(/"}$/, 'A"}');
    expect(() => verify(tampered, headers)).toThrow(RefusedRequest);
  });

  it("keeps other mentions as @name, removes the bot's, and reads rich text with images", () => {
    const { event } = messageEvent({ from: "ou_ann", chatId: "oc_team", chatType: "group", text: "" });
    const e = event as { message: { content: string; mentions: unknown[] } };
    e.message.content = JSON.stringify({ text: "@_user_1 ask @_user_2 , please" });
    e.message.mentions = [
      { key: "@_user_1", id: { open_id: BOT_OPEN_ID }, name: "Herald" },
      { key: "@_user_2", id: { open_id: "ou_bob" }, name: "Bob" },
    ];
    expect(parseMessageEvent(event, BOT_OPEN_ID)?.message).toMatchObject({
      text: "ask @Bob, please",
      mentioned: true,
      chatType: "group",
    });
    const post = messageEvent({
      from: "ou_ann",
      chatId: "oc_dm",
      chatType: "p2p",
      messageType: "post",
      content: {
        title: "Trip",
        content: [
          [
            { tag: "text", text: "see " },
            { tag: "img", image_key: "img_1" },
          ],
        ],
      },
    });
    const parsed = parseMessageEvent(post.event, BOT_OPEN_ID)!;
    expect(parsed.message.text).toBe("Trip\nsee");
    expect(parsed.resources).toEqual([{ key: "img_1", type: "image", name: "image.png" }]);
  });

  it("feishu.domain selects the Open API: lark is open.larksuite.com", () => {
    const base = {
      FEISHU_APP_ID: "cli_x",
      FEISHU_APP_SECRET: "s",
      FEISHU_ENCRYPT_KEY: "k",
      FEISHU_VERIFICATION_TOKEN: "t",
    };
    const lark = loadConfig({ env: { ...base, FEISHU_DOMAIN: "lark" } }).platforms["feishu"];
    const feishu = loadConfig({ env: base }).platforms["feishu"];
    expect(JSON.stringify(feishuPlatform.doctor?.(lark as never, { homeDir: "/" }))).toContain(
      "https://open.larksuite.com",
    );
    expect(JSON.stringify(feishuPlatform.doctor?.(feishu as never, { homeDir: "/" }))).toContain(
      "https://open.feishu.cn",
    );
    expect(() => loadConfig({ env: { FEISHU_APP_ID: "cli_x", FEISHU_APP_SECRET: "s" } })).toThrow(
      /FEISHU_ENCRYPT_KEY/,
    );
  });
});

describe("wecom", () => {
  it("decrypts what an independent implementation encrypted, and the reverse; a wrong key fails", () => {
    const text = "<xml><Content><![CDATA[你好, Herald]]></Content></xml>";
    expect(wecomDecrypt(fakeEncrypt(text, CORP_ID, AES_KEY), AES_KEY)).toEqual({
      message: text,
      receiverId: CORP_ID,
    });
    expect(wecomDecrypt(wecomEncrypt(text, CORP_ID, AES_KEY), AES_KEY).message).toBe(text);
    expect(() => wecomDecrypt(fakeEncrypt(text, CORP_ID, AES_KEY), "A".repeat(43))).toThrow();
  });

  it("reads CDATA and plain fields, and parses text and media messages", () => {
    expect(xmlField("<xml><A><![CDATA[x < y]]></A><B>1 &amp; 2</B></xml>", "A")).toBe("x < y");
    expect(xmlField("<xml><B>1 &amp; 2</B></xml>", "B")).toBe("1 & 2");
    const text = readMessage(
      "<xml><FromUserName><![CDATA[ann]]></FromUserName><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[hi]]></Content><MsgId>42</MsgId></xml>",
    );
    expect(parseMessage(text)?.message).toMatchObject({
      messageId: "42",
      chat: { chatId: "ann" },
      text: "hi",
      chatType: "dm",
    });
    const image = readMessage(
      "<xml><FromUserName>ann</FromUserName><MsgType>image</MsgType><MediaId>M1</MediaId><MsgId>43</MsgId></xml>",
    );
    expect(parseMessage(image)?.media).toEqual({ id: "M1", name: "image.jpg" });
    expect(() => readMessage("<xml><MsgType>text</MsgType></xml>")).toThrow(MalformedEventError);
  });
});

describe("dingtalk", () => {
  it("a DM is the sender's chat; a group message is the conversation's, addressed", () => {
    expect(parseRobotMessage(robotMessage({ from: "ann", text: "hi" }))?.message).toMatchObject({
      chat: { chatId: "ann" },
      chatType: "dm",
      text: "hi",
      mentioned: true,
      sender: { id: "ann" },
    });
    expect(
      parseRobotMessage(robotMessage({ from: "ann", text: "hi", group: "cidT" }))?.message,
    ).toMatchObject({
      chat: { chatId: "cidT" },
      chatType: "group",
      mentioned: true,
    });
  });
});
