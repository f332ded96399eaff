/**
 * DingTalk callbacks → `InboundMessage`. A robot hears one-to-one chats and, in groups, the messages
 * that @mention it (DingTalk delivers no others, and leaves the mention out of the text). Chats: a group is
 * `dingtalk:<openConversationId>` (`cid…`), a one-to-one chat `dingtalk:<sender's userid>`, as the robot
 * send API addresses them. Senders are named by their userid (`senderStaffId`), as allowlists name them.
 * `messageId` is the `msgId`, the same on every redelivery. A click on a card button becomes a message of
 * the clicking user with the button's data.
 */
import type { InboundMessage, KeyValueStore } from "../../core/types.js";
import { decodeButtonData } from "../shared/button-data.js";
import { cardCallbackSchema, robotMessageSchema } from "./types.js";

/** Thrown for a callback without the documented shape (logged, acknowledged and skipped). */
export class MalformedEventError extends Error {
  constructor(detail: string) {
    super(`malformed dingtalk callback: ${detail}`);
    this.name = "MalformedEventError";
  }
}

/** A robot message and the files to download (their download codes). */
export interface ParsedRobotMessage {
  message: InboundMessage;
  downloads: { code: string; name: string }[];
}

/** Parses a robot message. @throws MalformedEventError */
export function parseRobotMessage(data: unknown): ParsedRobotMessage | undefined {
  const parsed = robotMessageSchema.safeParse(data);
  if (!parsed.success)
    throw new MalformedEventError(parsed.error.issues[0]?.path.join(".") || "not an object");
  const m = parsed.data;
  const senderId = m.senderStaffId ?? m.senderId;
  if (!senderId) throw new MalformedEventError("no senderStaffId");
  const isDm = m.conversationType === "1";
  const downloads: ParsedRobotMessage["downloads"] = [];
  let text = m.text?.content ?? "";
  if (m.msgtype === "picture" && m.content?.downloadCode)
    downloads.push({ code: m.content.downloadCode, name: "image.png" });
  if ((m.msgtype === "file" || m.msgtype === "video" || m.msgtype === "audio") && m.content?.downloadCode) {
    downloads.push({ code: m.content.downloadCode, name: m.content.fileName ?? `${m.msgtype}.bin` });
  }
  if (m.msgtype === "richText") {
    text = (m.content?.richText ?? [])
      .map((part) => {
        if (part.downloadCode) downloads.push({ code: part.downloadCode, name: "image.png" });
        return part.text ?? "";
      })
      .join("");
  }
  text = text.trim();
  if (!text && downloads.length === 0) return undefined;
  return {
    downloads,
    message: {
      platform: "dingtalk",
      messageId: m.msgId,
      chat: { platform: "dingtalk", chatId: isDm ? senderId : m.conversationId },
      chatType: isDm ? "dm" : "group",
      sender: { id: senderId, name: m.senderNick },
      text,
      mentioned: isDm || m.isInAtList !== false,
      replyToId: m.msgId,
      sentAt: m.createAt,
    },
  };
}

/** A card button click; undefined for cards or data Herald does not know. @throws MalformedEventError */
export function parseCardCallback(
  data: unknown,
  kv: KeyValueStore,
): { message: InboundMessage; cardBizId: string; label: string } | undefined {
  const parsed = cardCallbackSchema.safeParse(data);
  if (!parsed.success)
    throw new MalformedEventError(parsed.error.issues[0]?.path.join(".") || "bad card callback");
  const { outTrackId, userId } = parsed.data;
  let value: { cardPrivateData?: { actionIds?: string[]; params?: Record<string, unknown> } };
  try {
    value = JSON.parse(parsed.data.value) as typeof value;
  } catch {
    throw new MalformedEventError("value is not JSON");
  }
  const actionId = value.cardPrivateData?.actionIds?.[0];
  const data_ = actionId ? decodeButtonData(actionId, kv) : undefined;
  const card = kv.get(`card:${outTrackId}`);
  if (data_ === undefined || !card) return undefined;
  const { chatId, chatType } = JSON.parse(card) as { chatId: string; chatType: "dm" | "group" };
  return {
    cardBizId: outTrackId,
    label: String(value.cardPrivateData?.params?.["label"] ?? data_),
    message: {
      platform: "dingtalk",
      messageId: `card:${outTrackId}:${userId}:${actionId}`,
      chat: { platform: "dingtalk", chatId },
      chatType,
      sender: { id: userId },
      text: data_,
      mentioned: true,
      viaButton: true,
      replyToId: outTrackId,
      sentAt: Date.now(),
    },
  };
}
