/**
 * A decrypted WeCom callback → `InboundMessage`. A self-built app hears DMs only (a user writing to the
 * app): chats are `wecom:<userid>`; group chats the app created (`appchat`) take messages but deliver none
 * back, so they are `wecom:#<chatid>` for sending only. `messageId` is the `MsgId`, the same on WeCom's
 * redeliveries. Images, voice, video and files carry a `MediaId` to download.
 */
import type { InboundMessage } from "../../core/types.js";
import type { WecomMessage } from "./types.js";
import { xmlField } from "./xml.js";

/** Thrown for a callback without the fields its type needs (logged and skipped). */
export class MalformedEventError extends Error {
  constructor(detail: string) {
    super(`malformed wecom callback: ${detail}`);
    this.name = "MalformedEventError";
  }
}

/** The fields of a decrypted callback's XML. @throws MalformedEventError */
export function readMessage(xml: string): WecomMessage {
  const field = (name: string) => xmlField(xml, name);
  const fromUser = field("FromUserName");
  const msgType = field("MsgType");
  if (!fromUser || !msgType) throw new MalformedEventError("no FromUserName or MsgType");
  return {
    toUser: field("ToUserName") ?? "",
    fromUser,
    createTime: Number(field("CreateTime") ?? 0),
    msgType,
    content: field("Content"),
    msgId: field("MsgId"),
    mediaId: field("MediaId"),
    fileName: field("FileName") ?? field("Title"),
    event: field("Event"),
    agentId: field("AgentID"),
  };
}

const MEDIA_TYPES: Record<string, string> = {
  image: "image.jpg",
  voice: "voice.amr",
  video: "video.mp4",
  file: "file",
};

/** A user's message as the gateway's, and the media to fetch; undefined for events and unknown types. */
export function parseMessage(
  m: WecomMessage,
): { message: InboundMessage; media?: { id: string; name: string } } | undefined {
  if (m.msgType === "event") return undefined;
  if (!m.msgId) throw new MalformedEventError(`${m.msgType} message without MsgId`);
  const message: InboundMessage = {
    platform: "wecom",
    messageId: m.msgId,
    chat: { platform: "wecom", chatId: m.fromUser },
    chatType: "dm",
    sender: { id: m.fromUser },
    text: "",
    mentioned: true,
    replyToId: m.msgId,
    sentAt: m.createTime ? m.createTime * 1000 : undefined,
  };
  if (m.msgType === "text") {
    message.text = (m.content ?? "").trim();
    return message.text ? { message } : undefined;
  }
  const name = MEDIA_TYPES[m.msgType];
  if (name) {
    if (!m.mediaId) throw new MalformedEventError(`${m.msgType} message without MediaId`);
    return { message, media: { id: m.mediaId, name: m.fileName ?? name } };
  }
  message.text = `[${m.msgType} message]`;
  return { message };
}
