/** The `mattermost:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** The `mattermost:` section of config.yaml. */
export const mattermostSchema = platformSection({
  /** The server's address, e.g. `https://chat.example.com` (no `/api/v4`). */
  url: z.url().optional(),
  /** A bot account's access token (or a user's personal access token). */
  token: z.string().min(1).optional(),
  /**
   * Requests per second the adapter allows itself (Mattermost's rate limiter, when enabled, allows 10/s
   * by default). @defaultValue 10
   */
  sendPerSecond: z.number().positive().default(10),
  /** `edit`: replies appear as they are written (one post edited in place); `off`: sent when done. */
  stream: streamSetting,
});

/** The parsed `mattermost:` section. */
export type MattermostSection = z.infer<typeof mattermostSchema>;
