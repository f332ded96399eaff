/**
 * Teams' step of `herald setup`: the Azure Bot's app id, a client secret and (single-tenant bots) the
 * tenant, checked live by signing in at the login endpoint (the client-credentials grant the adapter
 * uses for every reply).
 */
import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  apiUrl,
  askKept,
  askOwner,
  callService,
  keepApiUrl,
  keepSecrets,
  secret,
  skipped,
  untilChecked,
} from "../../core/setup-steps.js";
import { BOT_FRAMEWORK_SCOPE, loginUrlOf } from "./auth.js";
import { TEAMS_DEFAULTS } from "./section.js";

/** The app signs in: the login endpoint answers the client-credentials grant with a token. */
export async function checkTeams(
  appId: string,
  appPassword: string,
  options: { tenantId?: string | undefined; loginUrl?: string | undefined } = {},
): Promise<{ appId: string }> {
  const url = loginUrlOf({
    loginUrl: options.loginUrl ?? TEAMS_DEFAULTS.loginUrl,
    tenantId: options.tenantId,
  });
  const answer = await callService("the Microsoft login endpoint", url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: appId,
      client_secret: appPassword,
      scope: `${BOT_FRAMEWORK_SCOPE}/.default`,
    }).toString(),
  });
  if (answer.status === 200 && typeof answer.body["access_token"] === "string") return { appId };
  const error = typeof answer.body["error"] === "string" ? answer.body["error"] : `HTTP ${answer.status}`;
  if (error === "unauthorized_client" || error === "invalid_request") {
    throw new CheckFailed(
      `The login endpoint does not know app ${appId} (${error}). Copy the Microsoft App ID from the Azure Bot's Configuration page; a single-tenant bot also needs its tenant id.`,
    );
  }
  throw new CheckFailed(
    `The login endpoint refused the app id and secret (${error}). Create a new client secret under the app registration's Certificates & secrets and paste its value (not its id).`,
  );
}

async function teamsStep(ctx: StepContext): Promise<void> {
  ctx.p.note(
    "Microsoft Teams",
    "Create an Azure Bot (portal.azure.com → Azure Bot), enable its Microsoft Teams channel and set its messaging\nendpoint to https://<your host>/webhooks/teams. Copy the Microsoft App ID, and create a client secret under\nthe app registration's Certificates & secrets.",
  );
  await untilChecked(ctx, {
    ask: async () => {
      const appId = await askKept(ctx, "teams.app_id", "Microsoft App ID");
      if (!appId) return skipped(ctx, "Teams skipped: no app id.");
      const password = await secret(
        ctx,
        "teams.app_password",
        "TEAMS_APP_PASSWORD",
        "The client secret's value",
      );
      if (!password.value) return skipped(ctx, "Teams skipped: no client secret.");
      const tenantId = await ctx.p.text({
        key: "teams.tenant_id",
        message: "Tenant id (single-tenant bots; empty for multi-tenant)",
      });
      const loginUrl = await apiUrl(ctx, "teams.login_url", "teams.login_url", TEAMS_DEFAULTS.loginUrl);
      return { appId, password, tenantId, loginUrl };
    },
    label: "Signing in at the login endpoint",
    check: (a) =>
      checkTeams(a.appId, a.password.value!, { tenantId: a.tenantId || undefined, loginUrl: a.loginUrl }),
    describe: (r) => `Teams app ${r.appId}`,
    retry: "Teams settings",
    keep: (a) => {
      ctx.files.set("teams.app_id", a.appId);
      keepApiUrl(ctx, "teams.login_url", a.loginUrl, TEAMS_DEFAULTS.loginUrl);
      if (a.tenantId) ctx.files.set("teams.tenant_id", a.tenantId);
      keepSecrets(ctx, a.password);
      return askOwner(
        ctx,
        "teams",
        "Your own Entra object id (Entra ID → Users → you → Object ID; empty skips)",
      );
    },
  });
}

/** Teams in `herald setup`. */
export const teamsSetup: SetupQuestions = {
  label: "Microsoft Teams",
  hint: "an Azure Bot's app id + client secret; Teams posts to /webhooks/teams",
  chosenBy: "teams.app_id",
  flags: [
    {
      flag: "--teams-app-id <id>",
      key: "teams.app_id",
      env: "TEAMS_APP_ID",
      help: "env TEAMS_APP_ID: the Microsoft App ID",
    },
    {
      flag: "--teams-app-password <secret>",
      key: "teams.app_password",
      env: "TEAMS_APP_PASSWORD",
      help: "env TEAMS_APP_PASSWORD: a client secret of the app",
    },
    {
      flag: "--teams-tenant-id <id>",
      key: "teams.tenant_id",
      env: "TEAMS_TENANT_ID",
      help: "env TEAMS_TENANT_ID: the tenant of a single-tenant bot",
    },
    {
      flag: "--teams-login-url <url>",
      key: "teams.login_url",
      env: "TEAMS_LOGIN_URL",
      help: "env TEAMS_LOGIN_URL: the token endpoint ({tenant} is replaced)",
    },
    { flag: "--teams-owner <id>", key: "teams.owner", help: "your Entra object id" },
  ],
  step: teamsStep,
};
