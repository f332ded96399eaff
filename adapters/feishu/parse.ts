/**
 * Feishu events → `InboundMessage`. Chats: `feishu:<chat_id>` (`oc_…`), DMs (`p2p`) and groups alike;
 * a message in a topic keeps its `thread_id` as the thread. Senders are named by `open_id` (`ou_…`), as
 * allowlists name them. In groups the bot is addressed when a mention names its `open_id`; that mention
 * is removed from the text and others read `@name`. `messageId` is the message id, the same on every
 * redelivery. A card button's click becomes a message of the clicking user with the button's data.
 */
import type { InboundMessage, KeyValueStore } from "../../core/types.js";
import { decodeButtonData } from "../shared/button-data.js";
import { cardActionSchema, type FeishuResource, messageEventSchema } from "./types.js";

/** Thrown for an event without the documented shape (logged and skipped). */
export class MalformedEventError extends Error {
  constructor(detail: string) {
    super(`malformed feishu event: ${detail}`);
    this.name = "MalformedEventError";
  }
}

/** A parsed message and the files it carries (to download when it is addressed). */
export interface ParsedMessage {
  message: InboundMessage;
  resources: FeishuResource[];
}

interface PostNode {
  tag?: string;
  text?: string;
  href?: string;
  user_id?: string;
  user_name?: string;
  image_key?: string;
}

/** Text and files of a message's `content` by its type. */
function readContent(
  type: string,
  content: Record<string, unknown>,
): { text: string; resources: FeishuResource[] } {
  switch (type) {
    case "text":
      return { text: String(content["text"] ?? ""), resources: [] };
    case "image":
      return {
        text: "",
        resources: [{ key: String(content["image_key"]), type: "image", name: "image.png" }],
      };
    case "file":
    case "audio":
    case "media":
      return {
        text: "",
        resources: [
          {
            key: String(content["file_key"]),
            type: "file",
            name: String(content["file_name"] ?? `${type}.bin`),
          },
        ],
      };
    case "post": {
      const body = (content["content"] ?? []) as PostNode[][];
      const resources: FeishuResource[] = [];
      const lines = body.map((line) =>
        line
          .map((n) => {
            if (n.tag === "img" && n.image_key)
              resources.push({ key: n.image_key, type: "image", name: "image.png" });
            if (n.tag === "a") return `[${n.text ?? n.href}](${n.href})`;
            if (n.tag === "at") return n.user_id ? `${n.user_id}` : "";
            return n.text ?? "";
          })
          .join(""),
      );
      const title = content["title"] ? `${String(content["title"])}\n` : "";
      return { text: title + lines.join("\n"), resources };
    }
    default:
      return { text: `[${type} message]`, resources: [] };
  }
}

/** Parses `im.message.receive_v1`'s event; undefined for the bot's own. @throws MalformedEventError */
export function parseMessageEvent(event: unknown, botOpenId: string): ParsedMessage | undefined {
  const parsed = messageEventSchema.safeParse(event);
  if (!parsed.success) throw new MalformedEventError(parsed.error.issues[0]?.path.join(".") || "bad event");
  const { sender, message: m } = parsed.data;
  if (sender.sender_type !== "user" || sender.sender_id.open_id === botOpenId) return undefined;
  let content: Record<string, unknown>;
  try {
    content = JSON.parse(m.content) as Record<string, unknown>;
  } catch {
    throw new MalformedEventError("message.content is not JSON");
  }
  const { text: raw, resources } = readContent(m.message_type, content ?? {});
  const isDm = m.chat_type === "p2p";
  let mentioned = isDm;
  let text = raw;
  for (const mention of m.mentions ?? []) {
    const isBot = mention.id.open_id === botOpenId;
    mentioned ||= isBot;
    text = text.split(mention.key).join(isBot ? "" : `@${mention.name}`);
  }
  text = text
    .replace(/[ \t]+([,.!?:;])/g, "$1")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
  if (!text && resources.length === 0) return undefined;
  const chat = m.thread_id
    ? { platform: "feishu", chatId: m.chat_id, threadId: m.thread_id }
    : { platform: "feishu", chatId: m.chat_id };
  return {
    resources,
    message: {
      platform: "feishu",
      messageId: m.message_id,
      chat,
      chatType: isDm ? "dm" : "group",
      sender: { id: sender.sender_id.open_id },
      text,
      mentioned,
      replyToId: m.message_id,
      sentAt: m.create_time ? Number(m.create_time) : undefined,
    },
  };
}

/** A click on one of Herald's card buttons; undefined for other cards or data no longer known. */
export function parseCardAction(
  event: unknown,
  eventId: string,
  kv: KeyValueStore,
): { message: InboundMessage; cardId: string; label: string } | undefined {
  const parsed = cardActionSchema.safeParse(event);
  if (!parsed.success)
    throw new MalformedEventError(parsed.error.issues[0]?.path.join(".") || "bad card action");
  const { operator, action, context } = parsed.data;
  const value = (action.value ?? {}) as { herald?: unknown; label?: unknown };
  const data = typeof value.herald === "string" ? decodeButtonData(value.herald, kv) : undefined;
  if (data === undefined) return undefined;
  const chatType = kv.get(`chattype:${context.open_chat_id}`) === "dm" ? "dm" : "group";
  return {
    cardId: context.open_message_id,
    label: typeof value.label === "string" ? value.label : data,
    message: {
      platform: "feishu",
      messageId: `card:${eventId}`,
      chat: { platform: "feishu", chatId: context.open_chat_id },
      chatType,
      sender: { id: operator.open_id },
      text: data,
      mentioned: true,
      viaButton: true,
      replyToId: context.open_message_id,
      sentAt: Date.now(),
    },
  };
}
