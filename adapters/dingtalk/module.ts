/** DingTalk as a platform module: an app robot in Stream mode (`dingtalk-stream`) and the OpenAPI. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { dingtalkSchema } from "./section.js";
import { dingtalkSetup } from "./setup.js";

/** The DingTalk platform. */
export const dingtalkPlatform = definePlatform({
  name: "dingtalk",
  schema: dingtalkSchema,
  accountKeys: ["clientId", "clientSecret", "robotCode"],
  env: {
    DINGTALK_CLIENT_ID: ["client_id", "string"],
    DINGTALK_CLIENT_SECRET: ["client_secret", "string"],
    DINGTALK_ROBOT_CODE: ["robot_code", "string"],
    DINGTALK_API_URL: ["api_url", "url"],
  },
  isConfigured: (c) => Boolean(c.clientId && c.clientSecret),
  validate(c) {
    if (Boolean(c.clientId) !== Boolean(c.clientSecret)) {
      throw new ConfigError(
        c.clientId ? "DINGTALK_CLIENT_SECRET" : "DINGTALK_CLIENT_ID",
        "DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET go together. Fix: set both (the app's Client ID and Client Secret from its Credentials & Basic Info page), or neither.",
      );
    }
  },
  async create(c, deps) {
    const { createDingtalkAdapter } = await import("./index.js");
    return createDingtalkAdapter(
      { clientId: c.clientId!, clientSecret: c.clientSecret!, robotCode: c.robotCode, apiUrl: c.apiUrl },
      deps,
    );
  },
  reference: {
    rows: [
      ["client_id", "the app's Client ID (AppKey); with the secret, starts the platform"],
      ["client_secret", "the app's Client Secret (AppSecret)"],
      ["robot_code", "the robot's code when it differs from the Client ID"],
      ["api_url", "the OpenAPI's address (the stream gateway is opened there too)"],
    ],
  },
  setup: dingtalkSetup,
  doctor: (c) => [{ ok: true, text: `dingtalk: app ${c.clientId}, Stream mode via ${c.apiUrl}` }],
  promptHint:
    "You are replying in DingTalk: Markdown renders (headings, bold, links, lists, quotes), not tables. Keep replies reasonably short.",
});
