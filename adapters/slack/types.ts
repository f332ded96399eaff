/**
 * Types of the Slack adapter: its configuration and the shapes of the Slack payloads it reads itself
 * (validated with zod at the boundary). Bolt's own types stay inside this folder.
 */
import { z } from "zod";
import type { StreamMode } from "../shared/reply-stream.js";

/** What `createSlackAdapter` needs; built from the `slack` section of HeraldConfig. */
export interface SlackAdapterConfig {
  /** Bot token (`xoxb-…`): every Web API call and file download. */
  botToken: string;
  /** App-level token (`xapp-…`, scope `connections:write`). When set, events come over Socket Mode. */
  appToken?: string | undefined;
  /** Signing secret: HTTP events at `/webhooks/slack` are verified with it. */
  signingSecret?: string | undefined;
  /** Web API base. @defaultValue "https://slack.com/api/" */
  apiUrl?: string | undefined;
  /** Largest inbound file downloaded. @defaultValue 20 MiB */
  maxFileBytes?: number | undefined;
  /** Reaction put on the user's message while a turn runs (no colons). @defaultValue "eyes" */
  workingReaction?: string | undefined;
  /** The reaction goes once `sendTyping` has not come for this long (a turn that ended without a reply). @defaultValue 15000 */
  workingIdleMs?: number | undefined;
  /**
   * Time the adapter may spend recording an event before it acknowledges it anyway (Slack retries
   * events not acknowledged within 3 s). @defaultValue 2500
   */
  ackDeadlineMs?: number | undefined;
  /** First Socket Mode reconnect delay; doubles up to 30 s. @defaultValue 1000 */
  reconnectBaseMs?: number | undefined;
  /** Timeout of one Web API request. @defaultValue 60000 */
  requestTimeoutMs?: number | undefined;
  /**
   * `SLACK_STREAM`: `edit` shows a reply as it is written, one message updated in place; `off` posts it
   * whole when done. @defaultValue "edit"
   */
  stream?: StreamMode | undefined;
}

/** A file attached to a Slack message (the fields the adapter reads). */
export const slackFileSchema = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  title: z.string().nullish(),
  mimetype: z.string().nullish(),
  filetype: z.string().nullish(),
  size: z.number().nullish(),
  url_private: z.string().nullish(),
  url_private_download: z.string().nullish(),
  /** `tombstone`, `hidden_by_limit`, `external`: no content to fetch. */
  mode: z.string().nullish(),
});
export type SlackFile = z.infer<typeof slackFileSchema>;

/** A `message` or `app_mention` event, as delivered in `event_callback.event`. */
export const slackMessageEventSchema = z.object({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().nullish(),
  channel: z.string().min(1),
  /** `im`, `mpim`, `channel`, `group`; absent on `app_mention`. */
  channel_type: z.string().nullish(),
  user: z.string().nullish(),
  bot_id: z.string().nullish(),
  text: z.string().nullish(),
  ts: z.string().regex(/^\d+\.\d+$/),
  thread_ts: z
    .string()
    .regex(/^\d+\.\d+$/)
    .nullish(),
  files: z.array(slackFileSchema).nullish(),
  user_profile: z.object({ display_name: z.string().nullish(), real_name: z.string().nullish() }).nullish(),
});
export type SlackMessageEvent = z.infer<typeof slackMessageEventSchema>;

/** The bot's own identity, from `auth.test`. */
export interface SlackIdentity {
  botUserId: string;
  botId?: string | undefined;
  teamId?: string | undefined;
}
