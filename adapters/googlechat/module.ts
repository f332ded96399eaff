/** Google Chat as a platform module: a Chat app on an HTTP endpoint (`/webhooks/googlechat`), replies through the REST API. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { userIdOf } from "./parse.js";
import { googlechatSchema } from "./section.js";
import { checkGoogleChat, googlechatSetup } from "./setup.js";

/** The Google Chat platform. */
export const googlechatPlatform = definePlatform({
  name: "googlechat",
  schema: googlechatSchema,
  accountKeys: ["serviceAccount", "audience"],
  env: {
    GOOGLE_CHAT_SERVICE_ACCOUNT: ["service_account", "string"],
    GOOGLE_CHAT_AUDIENCE: ["audience", "string"],
    GOOGLE_CHAT_API_URL: ["api_url", "url"],
    GOOGLE_CHAT_CERTS_URL: ["certs_url", "url"],
    GOOGLE_CHAT_STREAM: ["stream", "string"],
  },
  isConfigured: (c) => Boolean(c.serviceAccount && c.audience),
  validate(c) {
    if (Boolean(c.serviceAccount) !== Boolean(c.audience)) {
      throw new ConfigError(
        c.serviceAccount ? "GOOGLE_CHAT_AUDIENCE" : "GOOGLE_CHAT_SERVICE_ACCOUNT",
        "GOOGLE_CHAT_SERVICE_ACCOUNT and GOOGLE_CHAT_AUDIENCE go together. Fix: set both (the path to the Chat app's service-account JSON key and the project number), or neither.",
      );
    }
  },
  async create(c, deps) {
    // google-auth-library loads only when the adapter starts.
    const { createGooglechatAdapter } = await import("./index.js");
    return createGooglechatAdapter(
      {
        serviceAccount: c.serviceAccount!,
        audience: c.audience!,
        apiUrl: c.apiUrl,
        certsUrl: c.certsUrl,
        stream: c.stream,
      },
      deps,
    );
  },
  normaliseUserId: (id) => userIdOf(id.trim()),
  reference: {
    rows: [
      [
        "service_account",
        "path to the Chat app's service-account JSON key; with the audience, starts the platform",
      ],
      ["audience", "the Google Cloud project number (the app's Authentication Audience)"],
      ["api_url", "the Chat REST API"],
      ["certs_url", "where the certificates that sign Chat's requests are published"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: googlechatSetup,
  // A live sign-in with the key, as `herald setup` checks it.
  async doctor(c) {
    const where = "Chat must reach <your host>/webhooks/googlechat (the app's HTTP endpoint URL)";
    try {
      const { account } = await checkGoogleChat(c.serviceAccount!, c.audience!);
      return [{ ok: true, text: `googlechat: ${account} signs in; ${where}` }];
    } catch (err) {
      return [
        { ok: false, text: "googlechat: the service account cannot sign in", fix: (err as Error).message },
      ];
    }
  },
  promptHint:
    "You are replying in Google Chat: it renders *bold*, _italic_, ~strike~, `code` and code blocks, but no headings or tables. Keep replies reasonably short.",
});
