/** The `email:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `email:` section of config.yaml. */
export const emailSchema = platformSection({
  address: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  imapHost: z.string().min(1).optional(),
  imapPort: z.number().int().positive().default(993),
  smtpHost: z.string().min(1).optional(),
  smtpPort: z.number().int().positive().default(587),
  tls: z.boolean().default(true),
  pollIntervalMs: z.number().int().positive().default(60_000),
  verifySender: z.boolean().default(true),
  trustedAuthservId: z
    .string()
    .trim()
    .regex(
      /^[^\s;()"\\]+$/,
      "an authserv-id is one word without spaces, quotes, ';' or parentheses: the name your mail server writes first in Authentication-Results, e.g. mx.google.com",
    )
    .optional(),
});

/** The parsed `email:` section. */
export type EmailSection = z.infer<typeof emailSchema>;
