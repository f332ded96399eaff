/** Microsoft Teams as a platform module: Bot Framework (`botbuilder`), activities in at `/webhooks/teams`. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { splitTeamsChatId } from "./parse.js";
import { TEAMS_DEFAULTS, teamsSchema } from "./section.js";
import { checkTeams, teamsSetup } from "./setup.js";

/** The Teams platform. */
export const teamsPlatform = definePlatform({
  name: "teams",
  schema: teamsSchema,
  accountKeys: ["appId", "appPassword"],
  env: {
    TEAMS_APP_ID: ["app_id", "string"],
    TEAMS_APP_PASSWORD: ["app_password", "string"],
    TEAMS_TENANT_ID: ["tenant_id", "string"],
    TEAMS_OPENID_METADATA_URL: ["open_id_metadata_url", "url"],
    TEAMS_LOGIN_URL: ["login_url", "string"],
    TEAMS_SERVICE_URL: ["service_url", "url"],
    TEAMS_STREAM: ["stream", "string"],
  },
  isConfigured: (c) => Boolean(c.appId && c.appPassword),
  validate(c) {
    if (Boolean(c.appId) !== Boolean(c.appPassword)) {
      throw new ConfigError(
        c.appId ? "TEAMS_APP_PASSWORD" : "TEAMS_APP_ID",
        "TEAMS_APP_ID and TEAMS_APP_PASSWORD go together. Fix: set both (the Azure Bot's Microsoft App ID and a client secret of its app registration), or neither.",
      );
    }
    if (!/^https?:\/\//.test(c.loginUrl)) {
      throw new ConfigError(
        "TEAMS_LOGIN_URL",
        "TEAMS_LOGIN_URL must be an http(s) URL, e.g. the default " + TEAMS_DEFAULTS.loginUrl,
      );
    }
  },
  async create(c, deps) {
    // botbuilder loads only when the adapter starts.
    const { createTeamsAdapter } = await import("./index.js");
    return createTeamsAdapter(
      {
        appId: c.appId!,
        appPassword: c.appPassword!,
        tenantId: c.tenantId,
        openIdMetadataUrl: c.openIdMetadataUrl,
        loginUrl: c.loginUrl,
        serviceUrl: c.serviceUrl,
        stream: c.stream,
      },
      deps,
    );
  },
  // Entra object ids are GUIDs; Teams writes them in lower case.
  normaliseUserId: (id) => id.trim().toLowerCase(),
  splitChatId: splitTeamsChatId,
  reference: {
    rows: [
      ["app_id", "the Azure Bot's Microsoft App ID; with the secret, starts the platform"],
      ["app_password", "a client secret of the bot's app registration"],
      ["tenant_id", "the tenant of a single-tenant bot", "multi-tenant (`botframework.com`)"],
      ["open_id_metadata_url", "where the keys that sign Teams' requests are published"],
      ["login_url", "the token endpoint; `{tenant}` is replaced"],
      ["service_url", "the connector for chats Herald has not heard from yet"],
      ["stream", "`edit` or `off`"],
    ],
  },
  setup: teamsSetup,
  // A live sign-in, as `herald setup` checks it.
  async doctor(c) {
    const where = "Teams must reach <your host>/webhooks/teams (the Azure Bot's messaging endpoint)";
    try {
      await checkTeams(c.appId!, c.appPassword!, { tenantId: c.tenantId, loginUrl: c.loginUrl });
      return [{ ok: true, text: `teams: app ${c.appId} signs in; ${where}` }];
    } catch (err) {
      return [{ ok: false, text: `teams: app ${c.appId} cannot sign in`, fix: (err as Error).message }];
    }
  },
  promptHint:
    "You are replying in Microsoft Teams: Markdown renders (bold, italics, lists, links, code blocks; no tables). Keep replies reasonably short.",
});
