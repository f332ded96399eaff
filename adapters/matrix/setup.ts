/** Matrix's step of `herald setup`: the homeserver and access token, checked with whoami; the owner's id. */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { addOwner, callService, checked, secret, trimUrl, tryAgain } from "../../core/setup-steps.js";

/** Matrix's whoami with the access token: the account's user id. */
export async function checkMatrix(homeserver: string, accessToken: string): Promise<{ userId: string }> {
  const answer = await callService(
    "the Matrix homeserver",
    `${trimUrl(homeserver)}/_matrix/client/v3/account/whoami`,
    { headers: { authorization: `Bearer ${accessToken}` } },
  );
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `The homeserver answered ${answer.status} to whoami: the access token is wrong or logged out. Create a new one (Element: Settings → Help & About → Access Token).`,
    );
  }
  if (answer.status !== 200) throw new CheckFailed(`The homeserver answered ${answer.status} to whoami.`);
  return { userId: String(answer.body["user_id"] ?? "") };
}

async function matrixStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const homeserver = await p.text({
      key: "matrix.homeserver",
      message: "Homeserver URL",
      initial: (files.get("matrix.homeserver") as string | undefined) ?? "https://matrix.org",
    });
    if (!homeserver) return p.say("warn", "Matrix skipped.");
    const token = await secret(ctx, "matrix.token", "MATRIX_ACCESS_TOKEN", "The bot account's access token");
    if (!token.value) return p.say("warn", "Matrix skipped: no access token.");
    const who = await checked(
      ctx,
      "Checking the token (whoami)",
      () => checkMatrix(homeserver, token.value!),
      (r) => `Matrix: ${r.userId}`,
    );
    if (!who) {
      if (await tryAgain(ctx, "Matrix settings")) continue;
      return;
    }
    files.set("matrix.homeserver", homeserver);
    if (token.isNew) files.setEnv("MATRIX_ACCESS_TOKEN", token.value);
    const owner = await p.text({
      key: "matrix.owner",
      message: "Your own Matrix id, e.g. @you:matrix.org (empty skips)",
    });
    return addOwner(ctx, "matrix", owner);
  }
}

/** Matrix in `herald setup`. */
export const matrixSetup: SetupQuestions = {
  label: "Matrix",
  hint: "homeserver + access token",
  chosenBy: "matrix.token",
  flags: [
    { flag: "--matrix-homeserver <url>", key: "matrix.homeserver", env: "MATRIX_HOMESERVER" },
    {
      flag: "--matrix-token <token>",
      key: "matrix.token",
      env: "MATRIX_ACCESS_TOKEN",
      help: "env MATRIX_ACCESS_TOKEN",
    },
    { flag: "--matrix-owner <id>", key: "matrix.owner", help: "your Matrix id, @you:server" },
  ],
  step: matrixStep,
};
