/** The `whatsapp:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `whatsapp:` section of config.yaml. */
export const whatsappSchema = platformSection({
  enabled: z.boolean().default(false),
  /** Answer in the account owner's "message yourself" chat. */
  selfChat: z.boolean().default(false),
});

/** The parsed `whatsapp:` section. */
export type WhatsAppSection = z.infer<typeof whatsappSchema>;
