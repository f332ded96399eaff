/** The `sms:` config section (Twilio): its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `sms:` section of config.yaml. */
export const smsSchema = platformSection({
  /** The account SID (`AC…`, Twilio Console → Account Info). */
  accountSid: z.string().min(1).optional(),
  /** The account's auth token. */
  authToken: z.string().min(1).optional(),
  /** The Twilio number replies are sent from, E.164 (`+15551234567`). */
  fromNumber: z
    .string()
    .regex(/^\+\d{6,15}$/, "an E.164 number like +15551234567")
    .optional(),
  /** The webhook's public URL as set on the number in Twilio (`https://…/webhooks/sms`). */
  webhookUrl: z.url().optional(),
  /** Twilio's REST API. @defaultValue "https://api.twilio.com" */
  apiUrl: z.url().default("https://api.twilio.com"),
  /** Characters per message sent (at most 1,600). @defaultValue 1600 */
  maxChars: z.number().int().min(160).max(1600).default(1600),
  /** The answer to HELP. */
  helpText: z.string().min(1).optional(),
});

/** The parsed `sms:` section. */
export type SmsSection = z.infer<typeof smsSchema>;
