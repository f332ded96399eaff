/** Signal as a platform module: signal-cli's JSON-RPC HTTP daemon, run by the user. */
import { definePlatform } from "../../core/platform.js";
import { signalSchema } from "./section.js";
import { signalSetup } from "./setup.js";

/** The Signal platform. */
export const signalPlatform = definePlatform({
  name: "signal",
  schema: signalSchema,
  accountKeys: ["account"],
  env: {
    SIGNAL_ACCOUNT: ["account", "string"],
    SIGNAL_HTTP_URL: ["http_url", "url"],
    SIGNAL_ACCOUNT_UUID: ["account_uuid", "string"],
    SIGNAL_WORKING_REACTION: ["working_reaction", "string"],
  },
  isConfigured: (c) => Boolean(c.account),
  async create(c, deps) {
    const { createSignalAdapter } = await import("./index.js");
    return createSignalAdapter(
      {
        account: c.account!,
        httpUrl: c.httpUrl,
        accountUuid: c.accountUuid,
        workingReaction: c.workingReaction,
      },
      deps,
    );
  },
  // Phone numbers compare without the leading `+`, as WhatsApp's do.
  normaliseUserId: (id) => id.replace(/^\+/, ""),
  reference: {
    rows: [
      ["account", "the bot's number in E.164 (`+4915…`); starts the platform"],
      ["http_url", "signal-cli's HTTP daemon"],
      ["account_uuid", "the account's ACI, so mentions carrying only it are recognised"],
      ["working_reaction", "the reaction while a turn runs; empty: none"],
    ],
  },
  setup: signalSetup,
  promptHint:
    "You are replying in Signal: **bold**, *italic*, ~~strikethrough~~ and `code` are shown as styles; headings, tables and other Markdown are not, so avoid them. Keep replies short.",
});
