/** The `teams:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** Microsoft's endpoints, the defaults of the URL keys (tests point them at a local fake). */
export const TEAMS_DEFAULTS = {
  /** Where Bot Framework publishes the keys that sign the tokens of inbound activities. */
  openIdMetadataUrl: "https://login.botframework.com/v1/.well-known/openidconfiguration",
  /** The Entra ID token endpoint; `{tenant}` is the tenant id (or `botframework.com` for multi-tenant bots). */
  loginUrl: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
  /** Teams' connector for proactive messages to a conversation Herald has not heard from yet. */
  serviceUrl: "https://smba.trafficmanager.net/teams/",
} as const;

/** The `teams:` section of config.yaml. */
export const teamsSchema = platformSection({
  /** The bot's Microsoft App ID (Azure Bot resource → Configuration). */
  appId: z.string().min(1).optional(),
  /** A client secret of that app registration. */
  appPassword: z.string().min(1).optional(),
  /** The app's Entra tenant id, for single-tenant bots; absent: multi-tenant (`botframework.com`). */
  tenantId: z.string().min(1).optional(),
  /** Bot Framework's OpenID metadata (the keys inbound tokens are checked against). */
  openIdMetadataUrl: z.url().default(TEAMS_DEFAULTS.openIdMetadataUrl),
  /** The token endpoint the bot signs in at; `{tenant}` is replaced. */
  loginUrl: z.string().min(1).default(TEAMS_DEFAULTS.loginUrl),
  /** The connector used for chats Herald has not received a message from. */
  serviceUrl: z.url().default(TEAMS_DEFAULTS.serviceUrl),
  /** `edit`: replies appear as they are written (one message updated in place); `off`: sent when done. */
  stream: streamSetting,
});

/** The parsed `teams:` section. */
export type TeamsSection = z.infer<typeof teamsSchema>;
