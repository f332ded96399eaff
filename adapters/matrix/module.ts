/** Matrix as a platform module: its config section, env names, chat ids and lazily built adapter. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { matrixSchema } from "./section.js";
import { matrixSetup } from "./setup.js";

/** The Matrix platform. */
export const matrixPlatform = definePlatform({
  name: "matrix",
  schema: matrixSchema,
  accountKeys: ["accessToken", "userId"],
  accountSecrets: ["password"],
  env: {
    MATRIX_HOMESERVER: ["homeserver", "url"],
    MATRIX_ACCESS_TOKEN: ["access_token", "string"],
    MATRIX_USER_ID: ["user_id", "string"],
    MATRIX_PASSWORD: ["password", "string"],
    MATRIX_STREAM: ["stream", "string"],
    MATRIX_ENCRYPTION: ["encryption", "bool"],
    MATRIX_STORE_KEY: ["store_key", "string"],
  },
  isConfigured: (c) => Boolean(c.homeserver),
  validate(c) {
    if (c.homeserver && !c.accessToken && !(c.userId && c.password)) {
      throw new ConfigError(
        "MATRIX_ACCESS_TOKEN",
        "MATRIX_HOMESERVER is set but neither MATRIX_ACCESS_TOKEN nor MATRIX_USER_ID + MATRIX_PASSWORD is. Fix: set one of them.",
      );
    }
  },
  async create(c, deps) {
    const { createMatrixAdapter, matrixConfigFrom } = await import("./index.js");
    return createMatrixAdapter(matrixConfigFrom(c, deps), deps);
  },
  // Room ids hold colons (`!abc:server.org`, the server part may carry a port); a thread is an event id,
  // recognised by the `$` that starts it: `matrix:!room:server:$event`.
  splitChatId(rest) {
    const at = rest.indexOf(":$");
    return at < 0 ? { chatId: rest } : { chatId: rest.slice(0, at), threadId: rest.slice(at + 1) };
  },
  reference: {
    rows: [
      ["homeserver", "starts the platform"],
      ["access_token", "or the two below"],
      ["user_id", "`@bot:example.org`, with the password"],
      ["password", "a password login; its token and device are kept"],
      ["stream", "`edit` or `off`"],
      [
        "encryption",
        "end-to-end encrypted rooms (Rust crypto, store kept under `HERALD_HOME/matrix-crypto`)",
      ],
      ["store_key", "passphrase the crypto store is encrypted with; unset: not encrypted at rest"],
    ],
  },
  setup: matrixSetup,
  promptHint: "You are replying in Matrix; Markdown is rendered.",
});
