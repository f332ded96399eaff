/** Google Chat events as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createGooglechatAdapter` takes. */
export interface GooglechatAdapterConfig {
  /** Path to the service-account key (JSON): its `client_email`, `private_key` and `token_uri`. */
  serviceAccount: string;
  /** The project number tokens from Chat must be addressed to. */
  audience: string;
  /** The Chat REST API, e.g. `https://chat.googleapis.com`. */
  apiUrl: string;
  /** The certificates of `chat@system.gserviceaccount.com`. */
  certsUrl: string;
  /** `edit`: replies are written in place as they stream; `off`: sent whole. @defaultValue "edit" */
  stream?: "edit" | "off" | undefined;
}

/** The service-account key fields Herald uses. */
export const serviceAccountSchema = z.looseObject({
  client_email: z.string().min(1),
  private_key: z.string().min(1),
  token_uri: z.url().default("https://oauth2.googleapis.com/token"),
});
export type ServiceAccountKey = z.infer<typeof serviceAccountSchema>;

const user = z.looseObject({
  name: z.string().min(1),
  displayName: z.string().optional(),
  type: z.string().optional(),
});

const space = z.looseObject({
  name: z.string().min(1),
  type: z.string().optional(),
  spaceType: z.string().optional(),
  singleUserBotDm: z.boolean().optional(),
});

/** An attachment of a message (an upload's `attachmentDataRef`, or a Drive file). */
export const attachmentSchema = z.looseObject({
  name: z.string().optional(),
  contentName: z.string().optional(),
  contentType: z.string().optional(),
  attachmentDataRef: z.looseObject({ resourceName: z.string().min(1) }).optional(),
  source: z.string().optional(),
});
export type ChatAttachment = z.infer<typeof attachmentSchema>;

/** A message inside an event. */
export const messageSchema = z.looseObject({
  name: z.string().min(1),
  text: z.string().optional(),
  argumentText: z.string().optional(),
  sender: user.optional(),
  createTime: z.string().optional(),
  thread: z.looseObject({ name: z.string().min(1) }).optional(),
  annotations: z.array(z.looseObject({ type: z.string() })).optional(),
  attachment: z.array(attachmentSchema).optional(),
});

/** An interaction event as Chat posts it to the app's HTTP endpoint. */
export const eventSchema = z.looseObject({
  type: z.string().min(1),
  eventTime: z.string().optional(),
  message: messageSchema.optional(),
  user: user.optional(),
  space,
  action: z
    .looseObject({
      actionMethodName: z.string().optional(),
      parameters: z.array(z.looseObject({ key: z.string(), value: z.string() })).optional(),
    })
    .optional(),
});
export type ChatEvent = z.infer<typeof eventSchema>;
