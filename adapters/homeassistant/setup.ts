/**
 * Home Assistant's step of `herald setup`: the conversation webhook's secret (made here unless given)
 * and who may talk; then the recipe for Home Assistant's side. The live check of the Home Assistant
 * connection itself (GET /api/) is the `ha` toolset's step.
 */
import { randomBytes } from "node:crypto";
import type { SetupQuestions, StepContext } from "../../core/setup.js";
import { addOwner } from "../../core/setup-steps.js";
import { DEFAULT_SENDER } from "./parse.js";

async function homeassistantStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  const given = await p.password({
    key: "homeassistant.webhook_secret",
    message: "The webhook secret Home Assistant will send (empty: make one)",
    hasCurrent: Boolean(files.env("HOMEASSISTANT_WEBHOOK_SECRET")),
  });
  const current = files.env("HOMEASSISTANT_WEBHOOK_SECRET");
  const secret = given || current || randomBytes(24).toString("hex");
  if (secret.length < 16)
    return p.say("error", "The webhook secret needs at least 16 characters; Home Assistant skipped.");
  if (secret !== current) files.setEnv("HOMEASSISTANT_WEBHOOK_SECRET", secret);
  p.note(
    "Home Assistant",
    [
      "In Home Assistant, install the Webhook Conversation integration (HACS) and set its webhook URL to",
      "  https://<herald-host>/webhooks/homeassistant/<HOMEASSISTANT_WEBHOOK_SECRET>",
      "(the secret is in HERALD_HOME/.env), output field `speech`; then pick it as the conversation agent",
      "of a voice assistant (Settings → Voice assistants). Or call it from a rest_command: see docs/platforms/homeassistant.md.",
    ].join("\n"),
  );
  const owner = await p.text({
    key: "homeassistant.owner",
    message: `Who may talk: a Home Assistant user id, or "${DEFAULT_SENDER}" for requests naming no user (empty skips)`,
    initial: DEFAULT_SENDER,
  });
  return addOwner(ctx, "homeassistant", owner);
}

/** Home Assistant in `herald setup`. */
export const homeassistantSetup: SetupQuestions = {
  label: "Home Assistant (voice assistant)",
  hint: "Herald answers Assist through a webhook",
  chosenBy: "homeassistant.webhook_secret",
  flags: [
    {
      flag: "--homeassistant-webhook-secret <secret>",
      key: "homeassistant.webhook_secret",
      env: "HOMEASSISTANT_WEBHOOK_SECRET",
      help: "env HOMEASSISTANT_WEBHOOK_SECRET: the secret Home Assistant sends",
    },
    {
      flag: "--homeassistant-owner <id>",
      key: "homeassistant.owner",
      help: "who may talk (a Home Assistant user id)",
    },
  ],
  step: homeassistantStep,
};
