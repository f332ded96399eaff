/**
 * botbuilder's `CloudAdapter` for one app: it authenticates inbound activities and runs Herald's logic
 * for them, and sends, updates and deletes activities through the connector at a conversation's
 * `serviceUrl` (proactively, with `continueConversationAsync`, so an outbox item sent after a restart
 * needs only the conversation's reference). The connector client waits out a 429's Retry-After itself
 * (up to three times); past that, and for every other failure, `connectorError` turns the SDK's error
 * into a `PlatformError` the outbox understands.
 */
import type { Activity, CloudAdapter, ConfigurationBotFrameworkAuthentication } from "botbuilder";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { BOT_FRAMEWORK_SCOPE, credentialsFactory, loginUrlOf, type TeamsTokens } from "./auth.js";
import type { OutActivity, TeamsActivity, TeamsAdapterConfig, TeamsChatRef } from "./types.js";

/** An inbound request refused because its token did not check out. */
export class UnauthenticatedError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = "UnauthenticatedError";
  }
}

/** The connector calls the adapter makes, on botbuilder. */
export class TeamsConnector {
  private constructor(
    private readonly config: TeamsAdapterConfig,
    private readonly tokens: TeamsTokens,
    private readonly auth: ConfigurationBotFrameworkAuthentication,
    private readonly cloud: CloudAdapter,
  ) {}

  /** Loads botbuilder (only now) and builds the adapter for `config`. */
  static async create(
    config: TeamsAdapterConfig,
    tokens: TeamsTokens,
    logger: Logger,
  ): Promise<TeamsConnector> {
    const { CloudAdapter, ConfigurationBotFrameworkAuthentication } = await import("botbuilder");
    const auth = new ConfigurationBotFrameworkAuthentication(
      {
        MicrosoftAppId: config.appId,
        MicrosoftAppType: config.tenantId ? "SingleTenant" : "MultiTenant",
        ...(config.tenantId ? { MicrosoftAppTenantId: config.tenantId } : {}),
        // Setting one of these makes botbuilder take all of them as given: Microsoft's public cloud, but
        // for the OpenID metadata (configurable) and the login URL (our credentials factory's).
        ValidateAuthority: true,
        ToChannelFromBotLoginUrl: loginUrlOf(config),
        ToChannelFromBotOAuthScope: BOT_FRAMEWORK_SCOPE,
        ToBotFromChannelTokenIssuer: BOT_FRAMEWORK_SCOPE,
        OAuthUrl: "https://api.botframework.com",
        ToBotFromChannelOpenIdMetadataUrl: config.openIdMetadataUrl,
        ToBotFromEmulatorOpenIdMetadataUrl:
          "https://login.microsoftonline.com/botframework.com/v2.0/.well-known/openid-configuration",
        CallerId: "urn:botframework:azure",
      },
      // A structural ServiceClientCredentialsFactory (the abstract class is botframework-connector's).
      credentialsFactory(config, tokens) as never,
    );
    const cloud = new CloudAdapter(auth);
    cloud.onTurnError = async (_context, error) => {
      logger.warn({ error: error.message }, "teams turn failed");
      throw error;
    };
    return new TeamsConnector(config, tokens, auth, cloud);
  }

  /**
   * Checks an inbound activity's token, then runs `logic` for it.
   * @throws UnauthenticatedError for a missing, forged or expired token; `logic`'s error otherwise.
   */
  async receive(activity: TeamsActivity, authHeader: string, logic: (a: TeamsActivity) => Promise<void>) {
    let result: Awaited<ReturnType<ConfigurationBotFrameworkAuthentication["authenticateRequest"]>>;
    try {
      result = await this.auth.authenticateRequest(activity as unknown as Activity, authHeader);
    } catch (err) {
      throw new UnauthenticatedError(err instanceof Error ? err.message : String(err));
    }
    let failure: unknown;
    await this.cloud
      .processActivityDirect(result, activity as unknown as Activity, async (context) => {
        try {
          await logic(context.activity as unknown as TeamsActivity);
        } catch (err) {
          failure = err;
        }
      })
      .catch((err: unknown) => {
        failure ??= err;
      });
    if (failure) throw failure;
  }

  /**
   * Runs `call` with the connector client of a proactive turn in the conversation's `serviceUrl`
   * (signed with the app's token). @throws PlatformError
   */
  private async withConnector<T>(
    ref: TeamsChatRef,
    call: (conversations: Conversations) => Promise<T>,
  ): Promise<T> {
    let out: T | undefined;
    const reference = {
      channelId: "msteams",
      serviceUrl: ref.serviceUrl,
      bot: { id: `28:${this.config.appId}`, name: "" },
      conversation: {
        id: "",
        isGroup: ref.conversationType !== undefined && ref.conversationType !== "personal",
        conversationType: ref.conversationType ?? "personal",
        tenantId: ref.tenantId ?? "",
        name: "",
      },
    };
    try {
      await this.cloud.continueConversationAsync(this.config.appId, reference, async (context) => {
        const client = context.turnState.get<{ conversations: Conversations }>(this.cloud.ConnectorClientKey);
        out = await call(client.conversations);
      });
    } catch (err) {
      throw connectorError(err, this.tokens);
    }
    return out as T;
  }

  /** Posts an activity to the conversation (a channel's reply chain included); resolves to its id. */
  async send(ref: TeamsChatRef, conversationId: string, activity: OutActivity): Promise<string> {
    const response = await this.withConnector(ref, (c) => c.sendToConversation(conversationId, activity));
    return response.id ?? "";
  }

  /** Replaces an activity the bot sent. */
  async update(ref: TeamsChatRef, conversationId: string, id: string, activity: OutActivity): Promise<void> {
    await this.withConnector(ref, (c) => c.updateActivity(conversationId, id, { ...activity, id }));
  }

  /** Deletes an activity the bot sent. */
  async delete(ref: TeamsChatRef, conversationId: string, id: string): Promise<void> {
    await this.withConnector(ref, (c) => c.deleteActivity(conversationId, id));
  }
}

/** The connector client's conversation operations Herald uses (botframework-connector's `Conversations`). */
interface Conversations {
  sendToConversation(conversationId: string, activity: object): Promise<{ id?: string }>;
  updateActivity(conversationId: string, activityId: string, activity: object): Promise<unknown>;
  deleteActivity(conversationId: string, activityId: string): Promise<unknown>;
}

/** The SDK's error as a `PlatformError`: 429 retryable with its wait, 401 final, 404 final, 5xx retryable. */
export function connectorError(err: unknown, tokens?: TeamsTokens): PlatformError {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause)
    if (e instanceof PlatformError) return e;
  const rest = err as {
    statusCode?: number;
    message?: string;
    response?: { headers?: { get?(name: string): string | undefined }; bodyAsText?: string };
  };
  const status = rest.statusCode;
  const detail = errorCode(rest.response?.bodyAsText) ?? rest.message ?? "no answer";
  if (status === undefined) {
    return new PlatformError("teams", `The Teams connector did not answer (${detail}).`, {
      cause: err,
      retryable: true,
    });
  }
  if (status === 429) {
    const retryAfterMs = waitOf(rest.response?.headers?.get?.("retry-after"));
    return new PlatformError("teams", `Teams rate-limited the bot (${detail}).`, {
      code: "platform_rate_limited",
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status === 401) {
    tokens?.reset();
    return new PlatformError(
      "teams",
      "The Teams connector refused the bot's token (401). Fix: check TEAMS_APP_ID and TEAMS_APP_PASSWORD, and that the Azure Bot resource has the Teams channel enabled.",
      { code: "platform_auth_failed" },
    );
  }
  return new PlatformError("teams", `The Teams connector answered ${status} (${detail}).`, {
    cause: err,
    retryable: status >= 500,
  });
}

function errorCode(body: string | undefined): string | undefined {
  try {
    const parsed = JSON.parse(body ?? "") as { error?: { code?: string; message?: string } };
    return parsed.error ? [parsed.error.code, parsed.error.message].filter(Boolean).join(": ") : undefined;
  } catch {
    return undefined;
  }
}

/** Retry-After in seconds or as an HTTP date, in ms. */
export function waitOf(header: string | undefined): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
