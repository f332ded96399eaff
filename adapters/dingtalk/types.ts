/** DingTalk's robot and card callback shapes as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createDingtalkAdapter` takes. */
export interface DingtalkAdapterConfig {
  clientId: string;
  /** Never logged. */
  clientSecret: string;
  /** @defaultValue clientId */
  robotCode?: string | undefined;
  /** e.g. `https://api.dingtalk.com`; the stream gateway is opened at `<apiUrl>/v1.0/gateway/connections/open`. */
  apiUrl: string;
}

/** A robot message (the `data` of a `/v1.0/im/bot/messages/get` callback). */
export const robotMessageSchema = z.looseObject({
  msgId: z.string().min(1),
  conversationId: z.string().min(1),
  /** "1": a one-to-one chat; "2": a group. */
  conversationType: z.string(),
  senderId: z.string().optional(),
  senderStaffId: z.string().optional(),
  senderNick: z.string().optional(),
  msgtype: z.string(),
  text: z.looseObject({ content: z.string() }).optional(),
  content: z
    .looseObject({
      downloadCode: z.string().optional(),
      fileName: z.string().optional(),
      richText: z
        .array(
          z.looseObject({
            text: z.string().optional(),
            downloadCode: z.string().optional(),
            type: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  isInAtList: z.boolean().optional(),
  createAt: z.number().optional(),
  conversationTitle: z.string().optional(),
});
export type DingtalkRobotMessage = z.infer<typeof robotMessageSchema>;

/** A card callback (the `data` of `/v1.0/card/instances/callback`). `value` is JSON. */
export const cardCallbackSchema = z.looseObject({
  outTrackId: z.string().min(1),
  userId: z.string().min(1),
  value: z.string(),
});
