/** Home Assistant as a platform module: its conversation webhook, and notifications over its REST API. */
import { definePlatform } from "../../core/platform.js";
import { homeassistantSchema } from "./section.js";
import { homeassistantSetup } from "./setup.js";

/** The Home Assistant platform (Herald as a conversation agent of Assist). */
export const homeassistantPlatform = definePlatform({
  name: "homeassistant",
  schema: homeassistantSchema,
  accountKeys: ["webhookSecret"],
  env: {
    HOMEASSISTANT_WEBHOOK_SECRET: ["webhook_secret", "string"],
    HOMEASSISTANT_REPLY_TIMEOUT_MS: ["reply_timeout_ms", "int"],
    HOMEASSISTANT_NOTIFY_SERVICE: ["notify_service", "string"],
  },
  isConfigured: (c) => Boolean(c.webhookSecret),
  async create(c, deps) {
    const { createHomeassistantAdapter } = await import("./index.js");
    return createHomeassistantAdapter(
      { webhookSecret: c.webhookSecret!, replyTimeoutMs: c.replyTimeoutMs, notifyService: c.notifyService },
      deps,
    );
  },
  reference: {
    intro:
      "Herald as a conversation agent of Home Assistant's Assist: Home Assistant posts each utterance to `/webhooks/homeassistant` and speaks the answer. Messages Herald starts go back as notifications when `ha.url` and `ha.token` are set. See [Home Assistant](platforms/homeassistant.md).",
    rows: [
      [
        "webhook_secret",
        "the secret Home Assistant sends (bearer header or last path part); set, starts the platform",
      ],
      [
        "reply_timeout_ms",
        "a request waits this long for the reply, then hears that it comes as a notification",
      ],
      [
        "notify_service",
        "where messages Herald starts go, e.g. `notify.mobile_app_phone`",
        "a persistent notification",
      ],
    ],
  },
  setup: homeassistantSetup,
  doctor: (c) => [
    {
      ok: true,
      text: `homeassistant: conversation webhook at /webhooks/homeassistant; messages Herald starts go to ${c.notifyService ?? "persistent notifications"}`,
    },
  ],
  promptHint:
    "You are answering through Home Assistant's voice assistant: your reply is spoken aloud. Answer in one or two short plain sentences, no Markdown, no lists, no emoji. To approve a held action the user says or types /approve.",
});
