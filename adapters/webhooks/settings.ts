/**
 * The `webhooks:` settings: the inbound routes, resolved with each secret read from its variable; and
 * their reference rows. Whether a route's `deliver` names known chats is checked where the platforms
 * are known (the config loader).
 */
import { defineFeature } from "../../core/settings.js";
import { resolveWebhooks } from "./config.js";
import { type WebhookConfig, webhooksSchema } from "./types.js";

/** Inbound webhook routes. */
export const webhooksSettings = defineFeature({
  key: "webhooks",
  schema: webhooksSchema,
  env: {},
  reference: {
    intro: "A list of inbound routes; see [Inbound webhooks](platforms/webhooks.md).",
    rows: [
      ["[].name", "`POST /webhooks/in/<name>`; lowercase letters, digits, `-`, `_`"],
      ["[].auth.type", "`hmac` or `bearer`"],
      [
        "[].auth.secret_env",
        "variable holding the shared secret (16 characters at least)",
        "required for `hmac`",
        "the name given",
      ],
      ["[].auth.header", "the header with the hex digest (bare or `sha256=<hex>`)"],
      ["[].auth.timestamp_header", "a signed Unix-seconds header"],
      ["[].auth.tolerance_s", "how far that timestamp may be from now"],
      [
        "[].auth.token_env",
        "variable holding the token (16 characters at least)",
        "required for `bearer`",
        "the name given",
      ],
      ["[].prompt", "the turn's prompt; `{{path.to.field}}` is filled from the JSON body as quoted data"],
      [
        "[].deliver",
        "targets as cron's: `telegram` (home channel), `telegram:<chat>`, `email:<addr>`, comma list",
      ],
      [
        "[].id_header",
        "a header naming each delivery uniquely (`X-GitHub-Delivery`), recorded besides the signed timestamp and body: the same id again is a replay",
      ],
      ["[].max_body_bytes", "larger bodies get 413"],
      ["[].max_per_minute", "more turns a minute get 429"],
      ["[].toolsets", "toolsets the turn may use"],
    ],
  },
  resolve: (routes: WebhookConfig[], { env }) => resolveWebhooks(routes, env),
});
