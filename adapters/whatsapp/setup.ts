/**
 * WhatsApp's step of `herald setup`: it is switched on and the owner's number goes on the allowlist;
 * linking the device is `herald whatsapp link`, shown here, since it needs the phone at hand.
 */

import type { SetupQuestions, StepContext } from "../../core/setup.js";
import { addOwner } from "../../core/setup-steps.js";

async function whatsappStep(ctx: StepContext): Promise<void> {
  ctx.files.set("whatsapp.enabled", true);
  ctx.p.note(
    "WhatsApp",
    "Herald joins your WhatsApp as a linked device. Before starting the gateway run\n  herald whatsapp link                  (scan the QR code: WhatsApp → Settings → Linked devices)\n  herald whatsapp link --phone +15551234567   (or a pairing code)",
  );
  const owner = await ctx.p.text({
    key: "whatsapp.owner",
    message: "Your own phone number in international format, e.g. +15551234567 (empty skips)",
  });
  return addOwner(ctx, "whatsapp", owner?.replace(/[^\d]/g, ""));
}

/** WhatsApp in `herald setup`. */
export const whatsappSetup: SetupQuestions = {
  label: "WhatsApp",
  hint: "linked as a device with `herald whatsapp link`",
  chosenBy: "whatsapp.enabled",
  flags: [
    {
      flag: "--whatsapp",
      key: "whatsapp.enabled",
      help: "enable WhatsApp (link it with `herald whatsapp link`)",
    },
    { flag: "--whatsapp-owner <phone>", key: "whatsapp.owner", help: "your phone number, +15551234567" },
  ],
  step: whatsappStep,
};
