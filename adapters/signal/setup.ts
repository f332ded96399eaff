/**
 * Signal's step of `herald setup`: the bot's number and signal-cli's daemon, checked by asking the
 * daemon for the account's groups; the owner's own number.
 */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { addOwner, callService, checked, trimUrl, tryAgain } from "../../core/setup-steps.js";

/** signal-cli's HTTP daemon knows the account: `listGroups` for it answers. */
export async function checkSignal(httpUrl: string, account: string): Promise<{ groups: number }> {
  const answer = await callService("signal-cli's daemon", `${trimUrl(httpUrl)}/api/v1/rpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: "setup", method: "listGroups", params: { account } }),
  });
  const error = answer.body["error"] as { message?: string } | undefined;
  if (answer.status !== 200 || error) {
    throw new CheckFailed(
      `signal-cli answered listGroups for ${account} with ${error?.message ?? `HTTP ${answer.status}`}. Register or link the number in signal-cli first, and run \`signal-cli -a ${account} daemon --http ${new URL(httpUrl).host}\`.`,
    );
  }
  return { groups: Array.isArray(answer.body["result"]) ? answer.body["result"].length : 0 };
}

async function signalStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  p.note(
    "Signal",
    "Herald talks to signal-cli, which holds the account:\n  signal-cli -a +4915112345678 register   (then: verify <code>)   — a number of its own, or\n  signal-cli link -n herald               — link to your phone: show the sgnl:// URI as a QR code, scan it in Signal → Settings → Linked devices\nthen run  signal-cli -a +4915112345678 daemon --http 127.0.0.1:8080  next to Herald.",
  );
  for (;;) {
    const account = await p.text({
      key: "signal.account",
      message: "The bot's Signal number, e.g. +4915112345678",
      initial: files.get("signal.account") as string | undefined,
    });
    if (!account) return p.say("warn", "Signal skipped: no number.");
    const fallback = "http://127.0.0.1:8080";
    const url =
      (await p.text({
        key: "signal.http_url",
        message: "signal-cli daemon URL",
        initial: (files.get("signal.http_url") as string | undefined) ?? fallback,
      })) ?? fallback;
    const ok = await checked(
      ctx,
      "Asking signal-cli for the account's groups (listGroups)",
      () => checkSignal(url, account),
      (r) => `Signal: ${account}, in ${r.groups} group(s)`,
    );
    if (!ok) {
      if (await tryAgain(ctx, "Signal settings")) continue;
      return;
    }
    files.set("signal.account", account);
    if (url !== fallback) files.set("signal.http_url", url);
    const owner = await p.text({
      key: "signal.owner",
      message: "Your own Signal number, e.g. +4917… (empty skips)",
    });
    return addOwner(ctx, "signal", owner?.replace(/[^\d+]/g, ""));
  }
}

/** Signal in `herald setup`. */
export const signalSetup: SetupQuestions = {
  label: "Signal",
  hint: "through a signal-cli daemon you run",
  chosenBy: "signal.account",
  flags: [
    {
      flag: "--signal-account <number>",
      key: "signal.account",
      env: "SIGNAL_ACCOUNT",
      help: "env SIGNAL_ACCOUNT: the bot's number in signal-cli",
    },
    {
      flag: "--signal-http-url <url>",
      key: "signal.http_url",
      env: "SIGNAL_HTTP_URL",
      help: "env SIGNAL_HTTP_URL: signal-cli's daemon",
    },
    { flag: "--signal-owner <number>", key: "signal.owner", help: "your Signal number" },
  ],
  step: signalStep,
};
