/** Feishu / Lark as a platform module: `@larksuiteoapi/node-sdk`'s Client for the Open API, HTTP events. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { FEISHU_DOMAINS, feishuSchema } from "./section.js";
import { feishuSetup } from "./setup.js";

/** The Feishu / Lark platform. */
export const feishuPlatform = definePlatform({
  name: "feishu",
  schema: feishuSchema,
  accountKeys: ["appId", "appSecret", "encryptKey", "verificationToken"],
  env: {
    FEISHU_APP_ID: ["app_id", "string"],
    FEISHU_APP_SECRET: ["app_secret", "string"],
    FEISHU_ENCRYPT_KEY: ["encrypt_key", "string"],
    FEISHU_VERIFICATION_TOKEN: ["verification_token", "string"],
    FEISHU_DOMAIN: ["domain", "string"],
    FEISHU_API_URL: ["api_url", "url"],
    FEISHU_STREAM: ["stream", "string"],
  },
  isConfigured: (c) => Boolean(c.appId),
  validate(c) {
    if (!c.appId) return;
    const missing = (
      [
        ["FEISHU_APP_SECRET", c.appSecret],
        ["FEISHU_ENCRYPT_KEY", c.encryptKey],
        ["FEISHU_VERIFICATION_TOKEN", c.verificationToken],
      ] as const
    ).find(([, v]) => !v);
    if (missing) {
      throw new ConfigError(
        missing[0],
        `FEISHU_APP_ID is set but ${missing[0]} is not. Fix: copy it from the Developer Console (App Secret: Credentials & Basic Info; Encrypt Key and Verification Token: Events & Callbacks → Encryption Strategy).`,
      );
    }
  },
  async create(c, deps) {
    const { createFeishuAdapter } = await import("./index.js");
    return createFeishuAdapter(
      {
        appId: c.appId!,
        appSecret: c.appSecret!,
        encryptKey: c.encryptKey!,
        verificationToken: c.verificationToken!,
        apiUrl: c.apiUrl ?? FEISHU_DOMAINS[c.domain],
        stream: c.stream,
      },
      deps,
    );
  },
  reference: {
    rows: [
      ["app_id", "the app's App ID (`cli_…`); starts the platform"],
      ["app_secret", "the app's App Secret"],
      [
        "encrypt_key",
        "Events & Callbacks → Encrypt Key: events are decrypted and their signatures checked with it",
      ],
      ["verification_token", "Events & Callbacks → Verification Token"],
      ["domain", "`feishu` (open.feishu.cn) or `lark` (open.larksuite.com)"],
      ["api_url", "the Open API's address when it is neither (overrides `domain`)"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: feishuSetup,
  doctor: (c) => [
    {
      ok: true,
      text: `feishu: app ${c.appId} on ${c.apiUrl ?? FEISHU_DOMAINS[c.domain]}; events at /webhooks/feishu`,
    },
  ],
  promptHint:
    "You are replying in Feishu / Lark: replies are cards that render Markdown (bold, italics, links, lists, code blocks), not tables or headings. Keep replies reasonably short.",
});
