/** WeCom (enterprise WeChat) as a platform module: a self-built app's callback URL and server API, no SDK. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { wecomSchema } from "./section.js";
import { wecomSetup } from "./setup.js";

const REQUIRED = [
  ["WECOM_AGENT_ID", "agentId"],
  ["WECOM_SECRET", "secret"],
  ["WECOM_TOKEN", "token"],
  ["WECOM_ENCODING_AES_KEY", "encodingAesKey"],
] as const;

/** The WeCom platform. */
export const wecomPlatform = definePlatform({
  name: "wecom",
  schema: wecomSchema,
  accountKeys: ["agentId", "secret", "token", "encodingAesKey"],
  env: {
    WECOM_CORP_ID: ["corp_id", "string"],
    WECOM_AGENT_ID: ["agent_id", "int"],
    WECOM_SECRET: ["secret", "string"],
    WECOM_TOKEN: ["token", "string"],
    WECOM_ENCODING_AES_KEY: ["encoding_aes_key", "string"],
    WECOM_API_URL: ["api_url", "url"],
  },
  isConfigured: (c) => Boolean(c.corpId),
  validate(c) {
    if (!c.corpId) return;
    const missing = REQUIRED.find(([, key]) => !c[key]);
    if (missing) {
      throw new ConfigError(
        missing[0],
        `WECOM_CORP_ID is set but ${missing[0]} is not. Fix: copy it from the app's page in App Management (AgentId, Secret) and its Receive Messages → Set API Receive settings (Token, EncodingAESKey).`,
      );
    }
  },
  async create(c, deps) {
    const { createWecomAdapter } = await import("./index.js");
    return createWecomAdapter(
      {
        corpId: c.corpId!,
        agentId: c.agentId!,
        secret: c.secret!,
        token: c.token!,
        encodingAesKey: c.encodingAesKey!,
        apiUrl: c.apiUrl,
      },
      deps,
    );
  },
  reference: {
    rows: [
      ["corp_id", "the organisation's Corp ID (`ww…`); starts the platform"],
      ["agent_id", "the self-built app's AgentId"],
      ["secret", "the app's Secret"],
      ["token", "the callback Token (Receive Messages → Set API Receive)"],
      ["encoding_aes_key", "the callback EncodingAESKey (43 characters)"],
      ["api_url", "the server API's address"],
    ],
  },
  setup: wecomSetup,
  doctor: (c) => [
    { ok: true, text: `wecom: corp ${c.corpId}, app ${c.agentId}; callbacks at /webhooks/wecom` },
  ],
  promptHint:
    "You are replying in WeCom (enterprise WeChat): Markdown renders headings, bold, links, quotes and inline code, not tables, lists of code blocks or images. Keep replies short.",
});
