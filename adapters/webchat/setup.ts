/**
 * The web chat's step of `herald setup`: turn it on, and give the owner's login a password (the
 * dashboard's, DASHBOARD_PASSWORD) unless one is set already; without one it answers only on this
 * machine. Nothing to check live: the gateway serves it.
 */
import type { SetupQuestions, StepContext } from "../../core/setup.js";
import { secret } from "../../core/setup-steps.js";

async function webStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  files.set("webchat.enabled", true);
  if (files.env("DASHBOARD_PASSWORD") || files.env("API_SERVER_KEY")) {
    p.say("info", "Web chat on at /chat; log in with the dashboard's password.");
    return;
  }
  const password = await secret(
    ctx,
    "dashboard.password",
    "DASHBOARD_PASSWORD",
    "A login password for the web chat and dashboard (12+ characters; empty: this machine only)",
  );
  if (password.isNew && password.value) {
    if (password.value.length < 12) {
      p.say("warn", "The password is shorter than 12 characters; not saved. Set DASHBOARD_PASSWORD later.");
      return;
    }
    files.setEnv("DASHBOARD_PASSWORD", password.value);
  }
  p.say(
    "info",
    password.value
      ? "Web chat on at /chat; log in with that password, then invite others from its menu."
      : "Web chat on at /chat, answering only on this machine until DASHBOARD_PASSWORD is set.",
  );
}

/** The web chat in `herald setup`. */
export const webSetup: SetupQuestions = {
  label: "Web chat",
  hint: "talk to the assistant in a browser at /chat",
  chosenBy: "webchat.enabled",
  flags: [{ flag: "--web", key: "webchat.enabled", help: "serve the web chat at /chat" }],
  step: webStep,
};
