/**
 * Google Chat's step of `herald setup`: the Chat app's service-account key and the project number,
 * checked live by signing in with the key (the JWT bearer grant the adapter uses for every reply).
 */
import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { addOwner, checked, tryAgain } from "../../core/setup-steps.js";

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
  const { p, files } = ctx;
  p.note(
    "Google Chat",
    "In the Google Cloud console: enable the Google Chat API, create a service account with a JSON key, and on the\nChat API's Configuration page set the app's HTTP endpoint URL to https://<your host>/webhooks/googlechat and\nits Authentication Audience to Project Number.",
  );
  for (;;) {
    const keyPath = await p.text({
      key: "googlechat.service_account",
      message: "Path to the service account's JSON key",
      initial: files.get("googlechat.service_account") as string | undefined,
    });
    if (!keyPath) return p.say("warn", "Google Chat skipped: no service-account key.");
    const audience = await p.text({ key: "googlechat.audience", message: "Project number" });
    if (!audience) return p.say("warn", "Google Chat skipped: no project number.");
    const ok = await checked(
      ctx,
      "Signing in with the key",
      () => checkGoogleChat(keyPath, audience),
      (r) => `Google Chat app ${r.account}`,
    );
    if (!ok) {
      if (await tryAgain(ctx, "Google Chat settings")) continue;
      return;
    }
    files.set("googlechat.service_account", keyPath);
    files.set("googlechat.audience", audience);
    const owner = await p.text({
      key: "googlechat.owner",
      message: "Your own Google Chat user id (the number of users/<number>; empty skips)",
    });
    return addOwner(ctx, "googlechat", owner);
  }
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
