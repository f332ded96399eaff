/** BlueBubbles' REST and webhook shapes as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createBlueBubblesAdapter` takes. */
export interface BlueBubblesAdapterConfig {
  /** The BlueBubbles server, e.g. `https://bb.example.com` (no `/api/v1`). */
  url: string;
  /** The server password: `?password=` on every REST call, and on the webhook URL. Never logged. */
  password: string;
  /** Words that address Herald in a group chat (matched as whole words, any case). @defaultValue ["herald"] */
  names?: string[] | undefined;
  /** Send with the Private API (typing indicators; needs the helper bundle on the Mac). @defaultValue false */
  privateApi?: boolean | undefined;
  /** How often the messages since the last one handed on are fetched, for webhooks that never came. @defaultValue 60000 */
  catchUpIntervalMs?: number | undefined;
}

/** A file on a message. */
export const attachmentSchema = z.looseObject({
  guid: z.string().min(1),
  transferName: z.string().nullish(),
  mimeType: z.string().nullish(),
  totalBytes: z.number().nullish(),
});
export type BlueBubblesAttachment = z.infer<typeof attachmentSchema>;

/** A message (`data` of a `new-message` event, and the items of `/message/query`). */
export const messageSchema = z.looseObject({
  guid: z.string().min(1),
  text: z.string().nullish(),
  isFromMe: z.boolean().default(false),
  dateCreated: z.number(),
  handle: z.looseObject({ address: z.string().min(1) }).nullish(),
  chats: z.array(z.looseObject({ guid: z.string().min(1), displayName: z.string().nullish() })).default([]),
  attachments: z.array(attachmentSchema).default([]),
  /** Set on tapbacks and other reactions: the message they react to. */
  associatedMessageGuid: z.string().nullish(),
  associatedMessageType: z.union([z.string(), z.number()]).nullish(),
  /** The message this one replies to (inline replies). */
  threadOriginatorGuid: z.string().nullish(),
  /** Group events (renames, joins) are not text. */
  itemType: z.number().nullish(),
  isSystemMessage: z.boolean().nullish(),
});
export type BlueBubblesMessage = z.infer<typeof messageSchema>;

/** A webhook POST's body. */
export const webhookSchema = z.looseObject({ type: z.string().min(1), data: z.unknown() });

/** Every REST answer: `{ status, message, data, error? }`. */
export const answerSchema = z.looseObject({
  status: z.number().optional(),
  message: z.string().optional(),
  data: z.unknown().optional(),
  error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }).nullish(),
});
