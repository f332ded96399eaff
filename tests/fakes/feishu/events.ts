/**
 * Feishu's side of event subscription: an event body as Feishu pushes it (v2 schema, the JSON
 * AES-256-CBC encrypted with SHA-256(Encrypt Key) under a random IV, base64 of IV + ciphertext), the
 * signature headers (`X-Lark-Signature` = hex SHA-256 of timestamp + nonce + key + body), and the
 * shapes of `im.message.receive_v1` and `card.action.trigger`.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";

export const APP_ID = "cli_a1b2c3d4e5f60718";
export const APP_SECRET = "feishu-app-secret-0123456789abcdef";
export const ENCRYPT_KEY = "feishu-encrypt-key-kq9w8e7r";
export const VERIFICATION_TOKEN = "feishu-verification-token-zx81";
export const BOT_OPEN_ID = "ou_bot0000000000000000000000000001";

/** Base64 of IV + AES-256-CBC ciphertext of `plain`, as Feishu encrypts events. */
export function encryptFeishu(plain: string, encryptKey = ENCRYPT_KEY): string {
  const key = createHash("sha256").update(encryptKey).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", key, iv);
  return Buffer.concat([iv, cipher.update(plain, "utf8"), cipher.final()]).toString("base64");
}

/** Options for one pushed request. */
export interface PushOptions {
  encryptKey?: string;
  token?: string;
  /** Sign with this key instead (a forged or stale signature). */
  signKey?: string;
  timestampSec?: number;
  unsigned?: boolean;
}

/** The body and headers of a pushed event. */
export function signedEvent(
  payload: object,
  options: PushOptions = {},
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ encrypt: encryptFeishu(JSON.stringify(payload), options.encryptKey) });
  const timestamp = String(options.timestampSec ?? Math.floor(Date.now() / 1000));
  const nonce = randomBytes(8).toString("hex");
  const signature = createHash("sha256")
    .update(timestamp + nonce + (options.signKey ?? options.encryptKey ?? ENCRYPT_KEY) + body)
    .digest("hex");
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (!options.unsigned) {
    headers["x-lark-request-timestamp"] = timestamp;
    headers["x-lark-request-nonce"] = nonce;
    headers["x-lark-signature"] = signature;
  }
  return { body, headers };
}

let seq = 0;
/** A v2 envelope around `event`. */
export function envelope(eventType: string, event: object, token = VERIFICATION_TOKEN): object {
  return {
    schema: "2.0",
    header: {
      event_id: `ev_${Date.now()}_${++seq}`,
      event_type: eventType,
      create_time: String(Date.now()),
      token,
      app_id: APP_ID,
      tenant_key: "tenant-1",
    },
    event,
  };
}

/** What a user's message says. */
export interface UserMessage {
  from: string;
  chatId: string;
  chatType: "p2p" | "group";
  text?: string;
  /** Put an @mention of the bot in front of the text. */
  mentionBot?: boolean;
  messageType?: string;
  content?: object;
  messageId?: string;
  threadId?: string;
}

/** `im.message.receive_v1` for a user's message. */
export function messageEvent(m: UserMessage): { messageId: string; event: object } {
  const messageId = m.messageId ?? `om_${randomBytes(12).toString("hex")}`;
  const mentions = m.mentionBot
    ? [
        {
          key: "@_user_1",
          id: { open_id: BOT_OPEN_ID, union_id: "on_bot", user_id: "" },
          name: "Herald",
          tenant_key: "tenant-1",
        },
      ]
    : [];
  const content = m.content ?? { text: `${m.mentionBot ? "@_user_1 " : ""}${m.text ?? ""}` };
  return {
    messageId,
    event: {
      sender: {
        sender_id: { open_id: m.from, union_id: `on_${m.from}`, user_id: m.from.slice(3) },
        sender_type: "user",
        tenant_key: "tenant-1",
      },
      message: {
        message_id: messageId,
        create_time: String(Date.now()),
        chat_id: m.chatId,
        chat_type: m.chatType,
        message_type: m.messageType ?? "text",
        content: JSON.stringify(content),
        mentions,
        ...(m.threadId ? { thread_id: m.threadId } : {}),
      },
    },
  };
}

/** `card.action.trigger` for a click on a button whose value is `value`. */
export function cardActionEvent(from: string, chatId: string, cardMessageId: string, value: unknown): object {
  return {
    operator: { open_id: from, union_id: `on_${from}`, user_id: from.slice(3), tenant_key: "tenant-1" },
    token: `c-${randomBytes(6).toString("hex")}`,
    action: { value, tag: "button" },
    host: "im_message",
    context: { open_message_id: cardMessageId, open_chat_id: chatId },
  };
}
