/** iMessage's step of `herald setup`: the BlueBubbles server and its password, checked with /api/v1/server/info. */
import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  askKept,
  askOwner,
  callService,
  keepSecrets,
  secret,
  skipped,
  trimUrl,
  untilChecked,
} from "../../core/setup-steps.js";

/** The server accepts the password: `GET /api/v1/server/info` answers with its version. */
export async function checkBlueBubbles(url: string, password: string): Promise<{ version: string }> {
  const answer = await callService(
    "BlueBubbles",
    `${trimUrl(url)}/api/v1/server/info?password=${encodeURIComponent(password)}`,
  );
  if (answer.status === 401) {
    throw new CheckFailed(
      "BlueBubbles answered 401 to /api/v1/server/info: the password is wrong. It is in the BlueBubbles app on the Mac → Settings → Server Password.",
    );
  }
  const data = answer.body["data"] as Record<string, unknown> | undefined;
  if (answer.status !== 200 || typeof data?.["server_version"] !== "string") {
    throw new CheckFailed(
      `BlueBubbles answered ${answer.status} to GET /api/v1/server/info. Check the server address (the one the BlueBubbles app shows).`,
    );
  }
  return { version: data["server_version"] };
}

async function bluebubblesStep(ctx: StepContext): Promise<void> {
  ctx.p.note(
    "iMessage (BlueBubbles)",
    "Herald reaches iMessage through a BlueBubbles server on a Mac signed in to iMessage. Copy its address and password\nfrom the BlueBubbles app, then add a webhook there: https://<your host>/webhooks/bluebubbles?password=<the same password>, event New Messages.",
  );
  await untilChecked(ctx, {
    ask: async () => {
      const url = await askKept(
        ctx,
        "bluebubbles.url",
        "BlueBubbles server address, e.g. https://bb.example.com",
      );
      if (!url) return skipped(ctx, "iMessage skipped: no server address.");
      const password = await secret(
        ctx,
        "bluebubbles.password",
        "BLUEBUBBLES_PASSWORD",
        "The server password",
      );
      if (!password.value) return skipped(ctx, "iMessage skipped: no password.");
      return { url, password };
    },
    label: "Checking the server (server/info)",
    check: (a) => checkBlueBubbles(a.url, a.password.value!),
    describe: (r) => `BlueBubbles server ${r.version}`,
    retry: "BlueBubbles settings",
    keep: (a) => {
      ctx.files.set("bluebubbles.url", a.url);
      keepSecrets(ctx, a.password);
      return askOwner(
        ctx,
        "bluebubbles",
        "Your own iMessage address (phone number in E.164 or Apple ID email; empty skips)",
      );
    },
  });
}

/** iMessage in `herald setup`. */
export const bluebubblesSetup: SetupQuestions = {
  label: "iMessage (BlueBubbles)",
  hint: "a BlueBubbles server's address + password",
  chosenBy: "bluebubbles.url",
  flags: [
    {
      flag: "--bluebubbles-url <url>",
      key: "bluebubbles.url",
      env: "BLUEBUBBLES_URL",
      help: "env BLUEBUBBLES_URL: the server's address",
    },
    {
      flag: "--bluebubbles-password <password>",
      key: "bluebubbles.password",
      env: "BLUEBUBBLES_PASSWORD",
      help: "env BLUEBUBBLES_PASSWORD: the server password",
    },
    {
      flag: "--bluebubbles-owner <address>",
      key: "bluebubbles.owner",
      help: "your iMessage phone number or email",
    },
  ],
  step: bluebubblesStep,
};
