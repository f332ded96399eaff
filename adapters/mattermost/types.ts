/** Mattermost's REST and WebSocket shapes as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createMattermostAdapter` takes. */
export interface MattermostAdapterConfig {
  /** The server, e.g. `https://chat.example.com`. */
  url: string;
  /** Bot or personal access token. Never logged. */
  token: string;
  /** REST calls per second (a token bucket of this size). @defaultValue 10 */
  sendPerSecond?: number | undefined;
  /** `edit`: replies are written in place as they stream; `off`: sent whole. @defaultValue "edit" */
  stream?: "edit" | "off" | undefined;
  /** WebSocket keepalive: a ping this often, reconnect when one goes unanswered. @defaultValue 30000 */
  pingIntervalMs?: number | undefined;
  /** First reconnect delay of the WebSocket; doubles up to 30 s. @defaultValue 1000 */
  reconnectBaseMs?: number | undefined;
}

/** A file's metadata (`FileInfo`). */
export const fileInfoSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().default(""),
  size: z.number().nonnegative().default(0),
  mime_type: z.string().optional(),
});
export type MattermostFileInfo = z.infer<typeof fileInfoSchema>;

/** A post (`data.post` of a `posted` event, JSON-encoded there). */
export const postSchema = z.looseObject({
  id: z.string().min(1),
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  root_id: z.string().default(""),
  message: z.string().default(""),
  /** System posts (joins, header changes) have a type; user posts have "". */
  type: z.string().default(""),
  create_at: z.number().optional(),
  file_ids: z.array(z.string()).optional(),
  props: z.record(z.string(), z.unknown()).optional(),
  metadata: z.looseObject({ files: z.array(fileInfoSchema).optional() }).optional(),
});
export type MattermostPost = z.infer<typeof postSchema>;

/** The `data` of a `posted` event: the post is a JSON string, as are the mentions. */
export const postedDataSchema = z.looseObject({
  post: z.string(),
  /** `D` direct, `G` group message, `O` public, `P` private channel. */
  channel_type: z.string().default("O"),
  sender_name: z.string().optional(),
  mentions: z.string().optional(),
});

/** One WebSocket frame from the server: an event (`event`, `seq`) or a reply (`seq_reply`). */
export const frameSchema = z.looseObject({
  event: z.string().optional(),
  seq: z.number().optional(),
  seq_reply: z.number().optional(),
  status: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type MattermostFrame = z.infer<typeof frameSchema>;

/** The bot's own user (`GET /users/me`). */
export interface MattermostMe {
  id: string;
  username: string;
}
