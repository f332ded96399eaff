/** The `line:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `line:` section of config.yaml. */
export const lineSchema = platformSection({
  /** The channel secret (Basic settings tab): webhook signatures are checked with it. */
  channelSecret: z.string().min(1).optional(),
  /** A long-lived channel access token (Messaging API tab). */
  channelAccessToken: z.string().min(1).optional(),
  /** The Messaging API's address. @defaultValue "https://api.line.me" */
  apiUrl: z.url().default("https://api.line.me"),
  /** Where message content is downloaded. @defaultValue "https://api-data.line.me" */
  dataUrl: z.url().default("https://api-data.line.me"),
  /** Herald's public HTTPS address; files sent out are served from it. */
  publicUrl: z.url().optional(),
});

/** The parsed `line:` section. */
export type LineSection = z.infer<typeof lineSchema>;
