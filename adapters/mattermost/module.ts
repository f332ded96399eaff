/** Mattermost as a platform module: `@mattermost/client` for REST, its WebSocket API for events. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { mattermostSchema } from "./section.js";
import { mattermostSetup } from "./setup.js";

/** The Mattermost platform. */
export const mattermostPlatform = definePlatform({
  name: "mattermost",
  schema: mattermostSchema,
  accountKeys: ["token"],
  env: {
    MATTERMOST_URL: ["url", "url"],
    MATTERMOST_TOKEN: ["token", "string"],
    MATTERMOST_SEND_PER_SECOND: ["send_per_second", "int"],
    MATTERMOST_STREAM: ["stream", "string"],
  },
  isConfigured: (c) => Boolean(c.url && c.token),
  validate(c) {
    if (Boolean(c.url) !== Boolean(c.token)) {
      throw new ConfigError(
        c.url ? "MATTERMOST_TOKEN" : "MATTERMOST_URL",
        "MATTERMOST_URL and MATTERMOST_TOKEN go together. Fix: set both (the server's address and a bot account's access token), or neither.",
      );
    }
  },
  async create(c, deps) {
    const { createMattermostAdapter } = await import("./index.js");
    return createMattermostAdapter(
      { url: c.url!, token: c.token!, sendPerSecond: c.sendPerSecond, stream: c.stream },
      deps,
    );
  },
  reference: {
    rows: [
      ["url", "the server's address without `/api/v4`; with the token, starts the platform"],
      ["token", "a bot account's access token"],
      ["send_per_second", "REST calls per second Herald allows itself"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: mattermostSetup,
  promptHint:
    "You are replying in Mattermost: Markdown renders (bold, italics, lists, tables, code blocks, links). Keep replies reasonably short.",
});
