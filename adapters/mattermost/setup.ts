/** Mattermost's step of `herald setup`: the server and a bot account's token, checked with users/me. */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { addOwner, callService, checked, secret, trimUrl, tryAgain } from "../../core/setup-steps.js";

/** Mattermost accepts the bot's access token: `GET /api/v4/users/me` answers with the bot. */
export async function checkMattermost(url: string, token: string): Promise<{ username: string }> {
  const answer = await callService("Mattermost", `${trimUrl(url)}/api/v4/users/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (answer.status === 401) {
    throw new CheckFailed(
      "Mattermost answered 401 to users/me: the access token is wrong or revoked. Create one in Integrations → Bot Accounts (or Profile → Security → Personal Access Tokens).",
    );
  }
  if (answer.status !== 200 || typeof answer.body["username"] !== "string") {
    throw new CheckFailed(
      `Mattermost answered ${answer.status} to GET /api/v4/users/me. Check the server address (the one you open in the browser, without /api/v4).`,
    );
  }
  return { username: answer.body["username"] };
}
async function mattermostStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  p.note(
    "Mattermost",
    "Herald signs in as a bot account: System Console → Integrations → Bot Accounts → Enable Bot Account Creation,\nthen Integrations → Bot Accounts → Add Bot Account, and copy its access token. Add the bot to the channels it should read.",
  );
  for (;;) {
    const url = await p.text({
      key: "mattermost.url",
      message: "Mattermost address, e.g. https://chat.example.com",
      initial: files.get("mattermost.url") as string | undefined,
    });
    if (!url) return p.say("warn", "Mattermost skipped: no address.");
    const token = await secret(ctx, "mattermost.token", "MATTERMOST_TOKEN", "The bot account's access token");
    if (!token.value) return p.say("warn", "Mattermost skipped: no access token.");
    const bot = await checked(
      ctx,
      "Checking the token (users/me)",
      () => checkMattermost(url, token.value!),
      (r) => `Mattermost bot @${r.username}`,
    );
    if (!bot) {
      if (await tryAgain(ctx, "Mattermost settings")) continue;
      return;
    }
    files.set("mattermost.url", url);
    if (token.isNew) files.setEnv("MATTERMOST_TOKEN", token.value);
    const owner = await p.text({
      key: "mattermost.owner",
      message: "Your own Mattermost user id (26 characters, System Console → Users; empty skips)",
    });
    return addOwner(ctx, "mattermost", owner);
  }
}

/** Mattermost in `herald setup`. */
export const mattermostSetup: SetupQuestions = {
  label: "Mattermost",
  hint: "server address + a bot account's access token",
  chosenBy: "mattermost.url",
  flags: [
    {
      flag: "--mattermost-url <url>",
      key: "mattermost.url",
      env: "MATTERMOST_URL",
      help: "env MATTERMOST_URL: the server's address",
    },
    {
      flag: "--mattermost-token <token>",
      key: "mattermost.token",
      env: "MATTERMOST_TOKEN",
      help: "env MATTERMOST_TOKEN: the bot account's access token",
    },
    { flag: "--mattermost-owner <id>", key: "mattermost.owner", help: "your Mattermost user id" },
  ],
  step: mattermostStep,
};
