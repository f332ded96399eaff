/** The `googlechat:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** Google's endpoints, the defaults of the URL keys (tests point them at a local fake). */
export const GOOGLE_CHAT_DEFAULTS = {
  apiUrl: "https://chat.googleapis.com",
  /** The certificates Google Chat signs its requests' bearer tokens with. */
  certsUrl: "https://www.googleapis.com/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com",
} as const;

/** The `googlechat:` section of config.yaml. */
export const googlechatSchema = platformSection({
  /** Path to the Chat app's service-account key (JSON). */
  serviceAccount: z.string().min(1).optional(),
  /** The Google Cloud project number: the audience of the tokens Chat sends. */
  audience: z
    .string()
    .regex(/^\d+$/, {
      error: "must be the project number (digits), as the Chat app's Authentication Audience",
    })
    .optional(),
  /** The Chat REST API's base URL. */
  apiUrl: z.url().default(GOOGLE_CHAT_DEFAULTS.apiUrl),
  /** Where the certificates that sign Chat's tokens are published. */
  certsUrl: z.url().default(GOOGLE_CHAT_DEFAULTS.certsUrl),
  /** `edit`: replies appear as they are written (one message updated in place); `off`: sent when done. */
  stream: streamSetting,
});

/** The parsed `googlechat:` section. */
export type GooglechatSection = z.infer<typeof googlechatSchema>;
