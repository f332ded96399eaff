/**
 * Email as a platform module: its config section, env names, reference rows, setup step, the doctor's
 * sender-check line and the lazily built adapter.
 */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { emailSchema } from "./section.js";
import { summarizeSenderCheck } from "./sender-auth.js";
import { emailSetup } from "./setup.js";

/** The email platform (IMAP in, SMTP out). */
export const emailPlatform = definePlatform({
  name: "email",
  schema: emailSchema,
  accountKeys: ["address"],
  accountSecrets: ["password"],
  env: {
    EMAIL_ADDRESS: ["address", "string"],
    EMAIL_PASSWORD: ["password", "string"],
    EMAIL_IMAP_HOST: ["imap_host", "string"],
    EMAIL_IMAP_PORT: ["imap_port", "int"],
    EMAIL_SMTP_HOST: ["smtp_host", "string"],
    EMAIL_SMTP_PORT: ["smtp_port", "int"],
    EMAIL_TLS: ["tls", "bool"],
    EMAIL_POLL_INTERVAL_MS: ["poll_interval_ms", "int"],
    EMAIL_VERIFY_SENDER: ["verify_sender", "bool"],
    EMAIL_TRUSTED_AUTHSERV_ID: ["trusted_authserv_id", "string"],
  },
  isConfigured: (c) => Boolean(c.address),
  validate(c) {
    if (c.address && (!c.imapHost || !c.smtpHost || !c.password)) {
      const missing = !c.password ? "EMAIL_PASSWORD" : !c.imapHost ? "EMAIL_IMAP_HOST" : "EMAIL_SMTP_HOST";
      throw new ConfigError(missing, `EMAIL_ADDRESS is set but ${missing} is not. Fix: set ${missing}.`);
    }
  },
  async create(c, deps) {
    const { createEmailAdapter, emailConfigFrom } = await import("./index.js");
    return createEmailAdapter(emailConfigFrom(c, deps), deps);
  },
  normaliseUserId: (id) => id.trim().toLowerCase(),
  reference: {
    rows: [
      ["address", "starts the platform"],
      ["password", "IMAP and SMTP password", "required"],
      ["imap_host", "", "required"],
      ["imap_port", ""],
      ["smtp_host", "", "required"],
      ["smtp_port", ""],
      ["tls", ""],
      ["poll_interval_ms", "polling besides IMAP IDLE"],
      [
        "verify_sender",
        "a mail's sender counts only when the receiving server's `Authentication-Results` vouches for it; `false` believes `From:` as written (warned at every start)",
      ],
      [
        "trusted_authserv_id",
        "your mail server's authserv-id, the first word of its `Authentication-Results` (`mx.google.com`)",
        "none (the topmost header counts, warned at start)",
      ],
    ],
  },
  setup: emailSetup,
  doctor(c) {
    const { ok, text, fix } = summarizeSenderCheck(c);
    return [{ ok, text, ...(fix ? { fix } : {}) }];
  },
  promptHint: "You are replying by email; write a complete, self-contained answer in Markdown, no signature.",
});
