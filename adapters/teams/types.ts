/** Bot Framework activities as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createTeamsAdapter` takes. */
export interface TeamsAdapterConfig {
  /** The bot's Microsoft App ID: the audience of inbound tokens, the client id of outbound ones. */
  appId: string;
  /** The app's client secret. Never logged. */
  appPassword: string;
  /** The Entra tenant of a single-tenant bot; absent: `botframework.com`. */
  tenantId?: string | undefined;
  /** Bot Framework's OpenID metadata URL (the signing keys of inbound tokens). */
  openIdMetadataUrl: string;
  /** The token endpoint, `{tenant}` replaced by the tenant. */
  loginUrl: string;
  /** The connector for chats Herald has not heard from. */
  serviceUrl: string;
  /** `edit`: replies are written in place as they stream; `off`: sent whole. @defaultValue "edit" */
  stream?: "edit" | "off" | undefined;
}

const account = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  aadObjectId: z.string().optional(),
});

/** One attachment of an activity (a file, an inline image, a card). */
export const attachmentSchema = z.looseObject({
  contentType: z.string(),
  contentUrl: z.string().optional(),
  content: z.unknown().optional(),
  name: z.string().optional(),
});
export type TeamsAttachment = z.infer<typeof attachmentSchema>;

/** An activity as Teams posts it to the bot's endpoint. */
export const activitySchema = z.looseObject({
  type: z.string().min(1),
  id: z.string().min(1).optional(),
  timestamp: z.string().optional(),
  serviceUrl: z.string().min(1),
  channelId: z.string().min(1),
  from: account,
  recipient: account,
  conversation: z.looseObject({
    id: z.string().min(1),
    conversationType: z.string().optional(),
    tenantId: z.string().optional(),
    isGroup: z.boolean().optional(),
  }),
  text: z.string().optional(),
  replyToId: z.string().optional(),
  value: z.unknown().optional(),
  attachments: z.array(attachmentSchema).optional(),
  entities: z.array(z.looseObject({ type: z.string() })).optional(),
  channelData: z.looseObject({ tenant: z.looseObject({ id: z.string() }).optional() }).optional(),
});
export type TeamsActivity = z.infer<typeof activitySchema>;

/** The mention entity of an activity (`<at>Herald</at>` in the text). */
export const mentionSchema = z.looseObject({
  type: z.literal("mention"),
  mentioned: z.looseObject({ id: z.string() }),
  text: z.string().optional(),
});

/** A file in a personal chat: Teams gives a pre-authorised download URL. */
export const fileDownloadInfo = z.looseObject({
  downloadUrl: z.string().min(1),
  fileType: z.string().optional(),
});

/** Where a chat's messages go: kept from the last activity Herald received there. */
export interface TeamsChatRef {
  serviceUrl: string;
  tenantId?: string | undefined;
  conversationType?: string | undefined;
}

/** An attachment Herald sends (a card, an inline image). */
export interface OutAttachment {
  contentType: string;
  contentUrl?: string;
  content?: unknown;
  name?: string;
}

/** An activity Herald sends: a message (text or a card) or a typing indicator. */
export interface OutActivity {
  type: "message" | "typing";
  text?: string;
  textFormat?: "markdown" | "plain";
  attachments?: OutAttachment[];
}
