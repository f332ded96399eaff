/** LINE's webhook payloads as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createLineAdapter` takes. */
export interface LineAdapterConfig {
  /** The channel secret: webhook bodies are signed with it (`x-line-signature`). Never logged. */
  channelSecret: string;
  /** A long-lived channel access token. Never logged. */
  channelAccessToken: string;
  /** The Messaging API. @defaultValue "https://api.line.me" */
  apiUrl?: string | undefined;
  /** Where message content is downloaded from. @defaultValue "https://api-data.line.me" */
  dataUrl?: string | undefined;
  /**
   * Herald's address as LINE reaches it (`https://herald.example.com`): files sent out are served from
   * `<publicUrl>/webhooks/line/media/<id>`, since LINE fetches images from a URL. Unset: files go as a
   * note naming them.
   */
  publicUrl?: string | undefined;
  /** How long after the event a reply token is still tried. LINE's tokens last a minute. @defaultValue 50000 */
  replyWindowMs?: number | undefined;
}

/** Where an event happened: a user (1:1), a group or a multi-person chat ("room"). */
export const sourceSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("user"), userId: z.string().min(1) }),
  z.looseObject({ type: z.literal("group"), groupId: z.string().min(1), userId: z.string().optional() }),
  z.looseObject({ type: z.literal("room"), roomId: z.string().min(1), userId: z.string().optional() }),
]);
export type LineSource = z.infer<typeof sourceSchema>;

/** A mention inside a text message (`isSelf`: the bot itself). */
export const mentioneeSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  length: z.number().int().positive(),
  type: z.string().default("user"),
  userId: z.string().optional(),
  isSelf: z.boolean().optional(),
});

/** The `message` of a message event; `text` for text, `fileName` for files. */
export const messageSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  text: z.string().optional(),
  fileName: z.string().optional(),
  fileSize: z.number().optional(),
  quotedMessageId: z.string().optional(),
  mention: z.looseObject({ mentionees: z.array(mentioneeSchema).default([]) }).optional(),
  contentProvider: z.looseObject({ type: z.string() }).optional(),
});
export type LineMessage = z.infer<typeof messageSchema>;

/** One webhook event; only `message` and `postback` are read, the rest are acknowledged and skipped. */
export const eventSchema = z.looseObject({
  type: z.string().min(1),
  webhookEventId: z.string().min(1),
  timestamp: z.number(),
  source: sourceSchema.optional(),
  replyToken: z.string().optional(),
  mode: z.string().optional(),
  deliveryContext: z.looseObject({ isRedelivery: z.boolean().default(false) }).optional(),
  message: messageSchema.optional(),
  postback: z.looseObject({ data: z.string() }).optional(),
});
export type LineEvent = z.infer<typeof eventSchema>;

/** A webhook request's body: events are validated one by one, so one bad event spoils no other. */
export const webhookBodySchema = z.looseObject({
  destination: z.string().optional(),
  events: z.array(z.unknown()),
});
