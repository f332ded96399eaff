/** The `webchat:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `webchat:` section of config.yaml. */
export const webSchema = platformSection({
  /** Serve the web chat at `/chat` of the API server's host and port. */
  enabled: z.boolean().default(false),
  /**
   * The password login is the user `owner`: listed here by default, so it is admitted and, while
   * `access.owners` is unset, an owner. Invited users are admitted by the pairing store instead.
   */
  allowedUsers: z.array(z.string()).default(["owner"]),
  /** How long a login (the password's or an invite's) lasts, in days. */
  loginDays: z.number().positive().max(3650).default(30),
  /** How long an invite link stays valid, in hours. */
  inviteHours: z.number().positive().max(720).default(72),
});

/** The parsed `webchat:` section. */
export type WebSection = z.infer<typeof webSchema>;
