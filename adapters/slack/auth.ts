/**
 * Start-up check of the bot token: `auth.test` gives the bot's identity, and Slack's `x-oauth-scopes`
 * header (when present) tells which scopes the token has. Without chat:write Herald cannot reply at
 * all, so start fails; other missing scopes only cost a feature and are logged.
 */
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { SlackApi } from "./api.js";
import type { SlackIdentity } from "./types.js";

/** Scopes Herald uses, and what is lost without each (chat:write is required). */
export const SCOPES: Record<string, string> = {
  "app_mentions:read": "mentions in channels",
  "channels:history": "thread follow-ups in public channels",
  "groups:history": "private channels",
  "mpim:history": "group DMs",
  "im:history": "direct messages",
  "reactions:write": "the working reaction",
  "files:read": "files users send",
  "files:write": "files Herald sends",
  "users:read": "sender names",
};

/**
 * Calls auth.test (up to three tries for transient faults).
 * @throws PlatformError naming SLACK_BOT_TOKEN or the missing scope, and the fix.
 */
export async function authenticate(api: SlackApi, log: Logger): Promise<SlackIdentity> {
  type AuthTest = {
    user_id?: string;
    bot_id?: string;
    team_id?: string;
    response_metadata?: { scopes?: string[] };
  };
  let result: AuthTest | undefined;
  for (let attempt = 0; !result; attempt++) {
    try {
      result = await api.call<AuthTest>("auth.test", {});
    } catch (err) {
      const retryable = err instanceof PlatformError && err.retryable;
      if (!retryable || attempt >= 2) throw err;
      await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
    }
  }
  if (!result.user_id) {
    throw new PlatformError(
      "slack",
      "SLACK_BOT_TOKEN is not a bot token (auth.test named no bot user). Fix: use the Bot User OAuth Token (xoxb-…).",
      { code: "platform_auth_failed" },
    );
  }
  const scopes = result.response_metadata?.scopes;
  if (scopes && !scopes.includes("chat:write")) {
    throw new PlatformError(
      "slack",
      "SLACK_BOT_TOKEN lacks the OAuth scope chat:write, so Herald cannot reply. Fix: add chat:write under OAuth & Permissions → Bot Token Scopes, reinstall the app, and set SLACK_BOT_TOKEN to the new token.",
      { code: "platform_auth_failed" },
    );
  }
  const missing = scopes ? Object.keys(SCOPES).filter((s) => !scopes.includes(s)) : [];
  if (missing.length) {
    log.warn(
      { missing: missing.map((s) => `${s} (${SCOPES[s]})`) },
      "slack bot token lacks recommended scopes; add them under OAuth & Permissions and reinstall",
    );
  }
  return { botUserId: result.user_id, botId: result.bot_id, teamId: result.team_id };
}
