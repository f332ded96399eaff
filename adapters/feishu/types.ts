/** Feishu / Lark event shapes as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createFeishuAdapter` takes. */
export interface FeishuAdapterConfig {
  appId: string;
  /** Never logged. */
  appSecret: string;
  /** Decrypts events and checks their signatures. Never logged. */
  encryptKey: string;
  /** Every event carries it. Never logged. */
  verificationToken: string;
  /** The Open API base, e.g. `https://open.feishu.cn`. */
  apiUrl: string;
  /** @defaultValue "edit" */
  stream?: "edit" | "off" | undefined;
  /** Oldest signed timestamp accepted. @defaultValue 300000 */
  maxSkewMs?: number | undefined;
}

/** An event body once decrypted: v2 (`schema: "2.0"`, `header`, `event`) or v1 (`type`, `token`). */
export const envelopeSchema = z.looseObject({
  schema: z.string().optional(),
  type: z.string().optional(),
  token: z.string().optional(),
  challenge: z.string().optional(),
  header: z
    .looseObject({ event_id: z.string().optional(), event_type: z.string(), token: z.string().optional() })
    .optional(),
  event: z.record(z.string(), z.unknown()).optional(),
});
export type FeishuEnvelope = z.infer<typeof envelopeSchema>;

const userIdSchema = z.looseObject({ open_id: z.string().min(1), user_id: z.string().optional() });

/** `im.message.receive_v1`'s event. */
export const messageEventSchema = z.looseObject({
  sender: z.looseObject({ sender_id: userIdSchema, sender_type: z.string().default("user") }),
  message: z.looseObject({
    message_id: z.string().min(1),
    root_id: z.string().optional(),
    parent_id: z.string().optional(),
    thread_id: z.string().optional(),
    create_time: z.string().optional(),
    chat_id: z.string().min(1),
    chat_type: z.string(),
    message_type: z.string(),
    content: z.string(),
    mentions: z
      .array(
        z.looseObject({
          key: z.string(),
          id: z.looseObject({ open_id: z.string().optional() }),
          name: z.string(),
        }),
      )
      .optional(),
  }),
});
export type FeishuMessageEvent = z.infer<typeof messageEventSchema>;

/** `card.action.trigger`'s event: a click on a card button. */
export const cardActionSchema = z.looseObject({
  operator: userIdSchema,
  action: z.looseObject({ value: z.unknown(), tag: z.string().optional() }),
  context: z.looseObject({ open_message_id: z.string().min(1), open_chat_id: z.string().min(1) }),
});
export type FeishuCardAction = z.infer<typeof cardActionSchema>;

/** A file or image a message carries, as `messageResource.get` names it. */
export interface FeishuResource {
  key: string;
  type: "image" | "file";
  name: string;
}
