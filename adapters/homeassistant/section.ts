/** The `homeassistant:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `homeassistant:` section of config.yaml (Home Assistant talking to Herald). */
export const homeassistantSchema = platformSection({
  /**
   * The secret Home Assistant sends with each conversation request (`Authorization: Bearer <secret>`,
   * or as the last part of the path, `/webhooks/homeassistant/<secret>`); set, it starts the platform.
   */
  webhookSecret: z.string().min(16, "at least 16 characters (e.g. openssl rand -hex 24)").optional(),
  /**
   * How long a request waits for the reply before Home Assistant is told it comes later (as a
   * notification); below the caller's own timeout (Webhook Conversation's default is 30 s).
   */
  replyTimeoutMs: z.number().int().positive().default(25_000),
  /**
   * Where messages Herald starts go (scheduled reports, late replies): a notify service such as
   * `notify.mobile_app_phone`; unset, a persistent notification in Home Assistant's sidebar.
   */
  notifyService: z
    .string()
    .regex(/^notify\.[a-z0-9_]+$/, "a notify service, e.g. notify.mobile_app_phone")
    .optional(),
});

/** The parsed `homeassistant:` section. */
export type HomeassistantSection = z.infer<typeof homeassistantSchema>;
