/** IRC as a platform module, on irc-framework. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { ircSchema } from "./section.js";
import { ircSetup } from "./setup.js";

/** The IRC platform. */
export const ircPlatform = definePlatform({
  name: "irc",
  schema: ircSchema,
  accountSecrets: ["password", "saslAccount", "saslPassword"],
  env: {
    IRC_SERVER: ["server", "string"],
    IRC_PORT: ["port", "int"],
    IRC_TLS: ["tls", "bool"],
    IRC_NICK: ["nick", "string"],
    IRC_CHANNELS: ["channels", "list"],
    IRC_PASSWORD: ["password", "string"],
    IRC_SASL_ACCOUNT: ["sasl_account", "string"],
    IRC_SASL_PASSWORD: ["sasl_password", "string"],
    IRC_SEND_BURST: ["send_burst", "int"],
    IRC_SEND_PER_SECOND: ["send_per_second", "int"],
  },
  isConfigured: (c) => Boolean(c.server),
  validate(c) {
    if (Boolean(c.saslAccount) !== Boolean(c.saslPassword)) {
      throw new ConfigError(
        c.saslAccount ? "IRC_SASL_PASSWORD" : "IRC_SASL_ACCOUNT",
        "IRC_SASL_ACCOUNT and IRC_SASL_PASSWORD go together (SASL PLAIN needs both). Fix: set both, or neither.",
      );
    }
  },
  async create(c, deps) {
    const { createIrcAdapter } = await import("./index.js");
    return createIrcAdapter(
      {
        server: c.server!,
        port: c.port ?? (c.tls ? 6697 : 6667),
        tls: c.tls,
        nick: c.nick,
        channels: c.channels,
        password: c.password,
        sasl:
          c.saslAccount && c.saslPassword ? { account: c.saslAccount, password: c.saslPassword } : undefined,
        sendBurst: c.sendBurst,
        sendPerSecond: c.sendPerSecond,
      },
      deps,
    );
  },
  // Hostmasks compare with the nick lowercased (IRC nicks are case-insensitive).
  normaliseUserId: (id) => {
    const bang = id.indexOf("!");
    return bang === -1 ? id.toLowerCase() : id.slice(0, bang).toLowerCase() + id.slice(bang);
  },
  reference: {
    rows: [
      ["server", "starts the platform"],
      ["port", "", "`6697` with TLS, else `6667`"],
      ["tls", ""],
      ["nick", ""],
      ["channels", "comma list of channels to join"],
      ["password", "server password (PASS)"],
      ["sasl_account, sasl_password", "SASL PLAIN (both or neither)"],
      ["send_burst", "lines sent at once before pacing"],
      ["send_per_second", "lines per second after the burst"],
    ],
  },
  setup: ircSetup,
  promptHint:
    "You are replying on IRC: plain text only, no Markdown; every line is a separate message, so be brief and avoid long lists.",
});
