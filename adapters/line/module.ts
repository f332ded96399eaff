/** LINE as a platform module: `@line/bot-sdk` for the Messaging API, webhooks at `/webhooks/line`. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { lineSchema } from "./section.js";
import { lineSetup } from "./setup.js";

/** The LINE platform. */
export const linePlatform = definePlatform({
  name: "line",
  schema: lineSchema,
  accountKeys: ["channelSecret", "channelAccessToken"],
  env: {
    LINE_CHANNEL_SECRET: ["channel_secret", "string"],
    LINE_CHANNEL_ACCESS_TOKEN: ["channel_access_token", "string"],
    LINE_API_URL: ["api_url", "url"],
    LINE_DATA_URL: ["data_url", "url"],
    LINE_PUBLIC_URL: ["public_url", "url"],
  },
  isConfigured: (c) => Boolean(c.channelSecret && c.channelAccessToken),
  validate(c) {
    if (Boolean(c.channelSecret) !== Boolean(c.channelAccessToken)) {
      throw new ConfigError(
        c.channelSecret ? "LINE_CHANNEL_ACCESS_TOKEN" : "LINE_CHANNEL_SECRET",
        "LINE_CHANNEL_SECRET and LINE_CHANNEL_ACCESS_TOKEN go together. Fix: set both (LINE Developers console → your Messaging API channel), or neither.",
      );
    }
  },
  async create(c, deps) {
    const { createLineAdapter } = await import("./index.js");
    return createLineAdapter(
      {
        channelSecret: c.channelSecret!,
        channelAccessToken: c.channelAccessToken!,
        apiUrl: c.apiUrl,
        dataUrl: c.dataUrl,
        publicUrl: c.publicUrl,
      },
      deps,
    );
  },
  reference: {
    rows: [
      ["channel_secret", "the channel secret; webhook signatures are checked with it"],
      ["channel_access_token", "a long-lived channel access token; with the secret, starts the platform"],
      ["api_url", "the Messaging API's address"],
      ["data_url", "where message content (images, files) is downloaded"],
      [
        "public_url",
        "Herald's public HTTPS address; files sent out are served from it (unset: files are named, not sent)",
      ],
    ],
  },
  setup: lineSetup,
  doctor: (c) => [
    { ok: true, text: "line: webhook at /webhooks/line" },
    c.publicUrl
      ? { ok: true, text: `line: files served from ${c.publicUrl}` }
      : { ok: true, text: "line: LINE_PUBLIC_URL unset; files are named in replies, not sent" },
  ],
  promptHint:
    "You are replying in LINE: Markdown is not rendered, so write plain text (no headings, bold markers or tables). Keep replies short.",
});
