/** The `signal:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `signal:` section of config.yaml. */
export const signalSchema = platformSection({
  /** The bot's Signal account (phone number in E.164, `+4915…`), as registered or linked in signal-cli. */
  account: z
    .string()
    .regex(/^\+[1-9]\d{5,15}$/, "a phone number in international form, e.g. +4915112345678")
    .optional(),
  /** signal-cli's HTTP daemon (`signal-cli -a <account> daemon --http 127.0.0.1:8080`). */
  httpUrl: z.url().default("http://127.0.0.1:8080"),
  /** The account's ACI (UUID), so mentions that carry only it are recognised. @defaultValue none */
  accountUuid: z.string().min(1).optional(),
  /** The reaction on a message while its turn runs ("working on it"); empty: none. @defaultValue 👀 */
  workingReaction: z.string().default("👀"),
});

/** The parsed `signal:` section. */
export type SignalSection = z.infer<typeof signalSchema>;
