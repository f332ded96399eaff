/** Twilio's SMS webhook parameters as Herald reads them (validated with zod), and the adapter's config. */
import { z } from "zod";

/** What `createSmsAdapter` takes. */
export interface SmsAdapterConfig {
  /** The account SID (`AC…`). */
  accountSid: string;
  /** The account's auth token: REST calls, media downloads and webhook signatures. Never logged. */
  authToken: string;
  /** The Twilio number replies are sent from (E.164, `+1555…`). */
  fromNumber: string;
  /**
   * The webhook's public address exactly as configured in Twilio (`https://herald.example.com/webhooks/sms`):
   * signatures are computed over it. Files sent out are served under it (`…/media/<id>`) as MMS media.
   */
  webhookUrl: string;
  /** Twilio's REST API. @defaultValue "https://api.twilio.com" */
  apiUrl?: string | undefined;
  /** Characters per SMS sent (Twilio splits it into segments the phone joins). @defaultValue 1600 */
  maxChars?: number | undefined;
  /** What a HELP message is answered with. */
  helpText?: string | undefined;
}

/** The form fields of an incoming-message webhook (`application/x-www-form-urlencoded`). */
export const inboundSchema = z.looseObject({
  MessageSid: z.string().regex(/^(SM|MM)[0-9a-f]{32}$/i, "a message SID (SM…/MM…)"),
  AccountSid: z.string().min(1),
  From: z.string().min(1),
  To: z.string().min(1),
  Body: z.string().default(""),
  NumMedia: z.coerce.number().int().nonnegative().default(0),
});
export type SmsInbound = z.infer<typeof inboundSchema>;
