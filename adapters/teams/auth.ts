/**
 * The bot's side of Bot Framework authentication. Inbound: botbuilder's
 * `ConfigurationBotFrameworkAuthentication` checks each activity's bearer token (an RS256 JWT issued by
 * `https://api.botframework.com` for the app id, signed by a key of the configured OpenID metadata's
 * JWKS, endorsed for `msteams`, naming the activity's `serviceUrl`). Outbound: a credentials factory
 * (botbuilder's extension point) that signs connector calls with a token from the client-credentials
 * grant at the configured login URL, kept until five minutes before it expires. MSAL, botbuilder's
 * default, accepts only https authorities; this grant is the same request and lets the login URL be
 * any endpoint (national clouds, a proxy, the test fake).
 */
import { PlatformError } from "../../core/errors.js";
import type { TeamsAdapterConfig } from "./types.js";

/** The token audience of Bot Framework's connector. */
export const BOT_FRAMEWORK_SCOPE = "https://api.botframework.com";

/** The token URL for the config's tenant. */
export function loginUrlOf(config: Pick<TeamsAdapterConfig, "loginUrl" | "tenantId">): string {
  return config.loginUrl.replace("{tenant}", encodeURIComponent(config.tenantId ?? "botframework.com"));
}

/** Access tokens of the app for one audience, fetched when needed and reused until near expiry. */
export class TeamsTokens {
  private token: { value: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly config: Pick<TeamsAdapterConfig, "appId" | "appPassword" | "loginUrl" | "tenantId">,
    private readonly scope = BOT_FRAMEWORK_SCOPE,
  ) {}

  /** A valid access token. @throws PlatformError (auth_failed when the secret is refused) */
  get(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now()) return Promise.resolve(this.token.value);
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forgets the token (the connector refused it). */
  reset(): void {
    this.token = undefined;
  }

  private async fetch(): Promise<string> {
    const url = loginUrlOf(this.config);
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: this.config.appId,
          client_secret: this.config.appPassword,
          scope: `${this.scope}/.default`,
        }),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new PlatformError("teams", `The Teams login endpoint ${new URL(url).origin} did not answer.`, {
        cause: err,
        retryable: true,
      });
    }
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.ok && typeof body["access_token"] === "string") {
      const lifetimeS = Number(body["expires_in"] ?? 3600);
      this.token = {
        value: body["access_token"],
        expiresAt: Date.now() + Math.max(60, lifetimeS - 300) * 1000,
      };
      return this.token.value;
    }
    const reason = typeof body["error"] === "string" ? body["error"] : `HTTP ${res.status}`;
    if (res.status === 400 || res.status === 401) {
      throw new PlatformError(
        "teams",
        `The Teams login endpoint refused TEAMS_APP_ID / TEAMS_APP_PASSWORD (${reason}). Fix: create a new client secret under the app registration's Certificates & secrets, and check TEAMS_TENANT_ID for a single-tenant bot.`,
        { code: "platform_auth_failed" },
      );
    }
    throw new PlatformError("teams", `The Teams login endpoint answered ${reason}.`, {
      retryable: res.status >= 500 || res.status === 429,
    });
  }
}

/** What botbuilder's connector client asks of credentials: sign each request. */
interface SignableRequest {
  headers: { set(name: string, value: string): void };
}

/**
 * botbuilder's `ServiceClientCredentialsFactory` for this one app: connector calls carry the app's
 * token; any other app id is refused; authentication is never disabled.
 */
export function credentialsFactory(config: TeamsAdapterConfig, tokens: TeamsTokens) {
  return {
    isValidAppId: async (appId: string) => appId === config.appId,
    isAuthenticationDisabled: async () => false,
    createCredentials: async (appId: string) => {
      if (appId !== config.appId) {
        throw new PlatformError(
          "teams",
          `An activity for app ${appId} reached the bot of app ${config.appId}.`,
        );
      }
      return {
        signRequest: async <R extends SignableRequest>(request: R): Promise<R> => {
          request.headers.set("authorization", `Bearer ${await tokens.get()}`);
          return request;
        },
      };
    },
  };
}
