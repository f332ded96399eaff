/**
 * Google Chat's step of `herald setup`: the Chat app's service-account key and the project number,
 * checked live by signing in with the key (the JWT bearer grant the adapter uses for every reply).
 */
import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { askKept, askOwner, skipped, untilChecked } from "../../core/setup-steps.js";

/** The key signs in: its token endpoint answers the JWT bearer grant with a token. */
export async function checkGoogleChat(keyPath: string, audience: string): Promise<{ account: string }> {
  if (!/^\d+$/.test(audience)) {
    throw new CheckFailed(
      `"${audience}" is not a project number. Use the number on the Google Cloud console's dashboard, and set the Chat app's Authentication Audience to Project Number.`,
    );
  }
  const { accessToken, chatCredentials, readServiceAccount } = await import("./auth.js");
  let key: Awaited<ReturnType<typeof readServiceAccount>>;
  try {
    key = await readServiceAccount(keyPath);
  } catch (err) {
    throw new CheckFailed((err as Error).message);
  }
  try {
    await accessToken(await chatCredentials(key));
  } catch (err) {
    throw new CheckFailed(`${key.client_email} could not sign in: ${(err as Error).message}`);
  }
  return { account: key.client_email };
}

async function googlechatStep(ctx: StepContext): Promise<void> {
  ctx.p.note(
    "Google Chat",
    "In the Google Cloud console: enable the Google Chat API, create a service account with a JSON key, and on the\nChat API's Configuration page set the app's HTTP endpoint URL to https://<your host>/webhooks/googlechat and\nits Authentication Audience to Project Number.",
  );
  await untilChecked(ctx, {
    ask: async () => {
      const keyPath = await askKept(
        ctx,
        "googlechat.service_account",
        "Path to the service account's JSON key",
      );
      if (!keyPath) return skipped(ctx, "Google Chat skipped: no service-account key.");
      const audience = await ctx.p.text({ key: "googlechat.audience", message: "Project number" });
      if (!audience) return skipped(ctx, "Google Chat skipped: no project number.");
      return { keyPath, audience };
    },
    label: "Signing in with the key",
    check: (a) => checkGoogleChat(a.keyPath, a.audience),
    describe: (r) => `Google Chat app ${r.account}`,
    retry: "Google Chat settings",
    keep: (a) => {
      ctx.files.set("googlechat.service_account", a.keyPath);
      ctx.files.set("googlechat.audience", a.audience);
      return askOwner(
        ctx,
        "googlechat",
        "Your own Google Chat user id (the number of users/<number>; empty skips)",
      );
    },
  });
}

/** Google Chat in `herald setup`. */
export const googlechatSetup: SetupQuestions = {
  label: "Google Chat",
  hint: "a Chat app's service-account key + project number; Chat posts to /webhooks/googlechat",
  chosenBy: "googlechat.service_account",
  flags: [
    {
      flag: "--googlechat-service-account <path>",
      key: "googlechat.service_account",
      env: "GOOGLE_CHAT_SERVICE_ACCOUNT",
      help: "env GOOGLE_CHAT_SERVICE_ACCOUNT: path to the service account's JSON key",
    },
    {
      flag: "--googlechat-audience <number>",
      key: "googlechat.audience",
      env: "GOOGLE_CHAT_AUDIENCE",
      help: "env GOOGLE_CHAT_AUDIENCE: the project number",
    },
    { flag: "--googlechat-owner <id>", key: "googlechat.owner", help: "your Google Chat user id" },
  ],
  step: googlechatStep,
};
