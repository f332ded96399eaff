/** iMessage as a platform module: a BlueBubbles server's REST API (plain fetch) and its webhooks. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { bluebubblesSchema } from "./section.js";
import { bluebubblesSetup } from "./setup.js";

/** The iMessage (BlueBubbles) platform. */
export const bluebubblesPlatform = definePlatform({
  name: "bluebubbles",
  schema: bluebubblesSchema,
  accountKeys: ["url", "password"],
  env: {
    BLUEBUBBLES_URL: ["url", "url"],
    BLUEBUBBLES_PASSWORD: ["password", "string"],
    BLUEBUBBLES_NAMES: ["names", "list"],
    BLUEBUBBLES_PRIVATE_API: ["private_api", "bool"],
  },
  isConfigured: (c) => Boolean(c.url && c.password),
  validate(c) {
    if (Boolean(c.url) !== Boolean(c.password)) {
      throw new ConfigError(
        c.url ? "BLUEBUBBLES_PASSWORD" : "BLUEBUBBLES_URL",
        "BLUEBUBBLES_URL and BLUEBUBBLES_PASSWORD go together. Fix: set both (the server's address and password from the BlueBubbles app), or neither.",
      );
    }
  },
  async create(c, deps) {
    const { createBlueBubblesAdapter } = await import("./index.js");
    return createBlueBubblesAdapter(
      { url: c.url!, password: c.password!, names: c.names, privateApi: c.privateApi },
      deps,
    );
  },
  // Handles are phone numbers (compared without `+`) or Apple ID emails (any case).
  normaliseUserId: (id) => id.trim().toLowerCase().replace(/^\+/, ""),
  reference: {
    rows: [
      ["url", "the BlueBubbles server's address; with the password, starts the platform"],
      ["password", "the server password (never logged); webhooks must carry it as `?password=`"],
      ["names", "words that address Herald in group chats"],
      ["private_api", "send through the Private API (typing bubbles)"],
    ],
  },
  setup: bluebubblesSetup,
  doctor: (c) => [
    { ok: true, text: `bluebubbles: ${c.url}, webhook at /webhooks/bluebubbles?password=…` },
    ...(c.privateApi ? [] : [{ ok: true, text: "bluebubbles: Private API off; no typing bubbles" }]),
  ],
  promptHint:
    "You are replying in iMessage: Markdown is not rendered, so write plain text (no headings, bold markers or tables). Keep replies short.",
});
