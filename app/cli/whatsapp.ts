/**
 * `herald whatsapp link [--phone <number>]` and `herald whatsapp unlink`. Baileys loads only when one of
 * them runs. Both work on `HERALD_HOME/whatsapp/`; stop the gateway first (two connections with the same
 * credentials replace each other).
 */
import { join } from "node:path";
import type { Command } from "commander";
import { createLogger } from "../../core/logger.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";

/** Baileys leaves sockets and timers behind: end the process when the command is done, 0 on success. */
const run = <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
  cliAction(
    async (...args: A) => {
      await fn(...args);
      process.exit(0);
    },
    { exit: true },
  );

function context() {
  const config = loadConfig();
  const logger = createLogger({ level: process.env["HERALD_LOG_LEVEL"] ?? "error" });
  return { authDir: join(config.homeDir, "whatsapp"), logger };
}

/** Adds the `whatsapp` command group to the `herald` program. */
export function registerWhatsAppCommands(program: Command): void {
  const whatsapp = program.command("whatsapp").description("link Herald to a WhatsApp account, or unlink it");

  whatsapp
    .command("link")
    .description("link this Herald as a WhatsApp device: scan a QR code, or use --phone for a pairing code")
    .option("--phone <number>", "the account's phone number in international format, e.g. +15551234567")
    .action(
      run(async (opts: { phone?: string }) => {
        const { authDir, logger } = context();
        const { linkWhatsApp, normalisePhone } = await import("../../adapters/whatsapp/index.js");
        if (opts.phone !== undefined) normalisePhone(opts.phone); // a typo fails before connecting
        const { printQr } = await import("../../adapters/whatsapp/index.js");
        process.stdout.write("Connecting to WhatsApp…\n");
        const result = await linkWhatsApp({
          authDir,
          phone: opts.phone,
          logger,
          onQr: printQr,
          onPairingCode: (code) => {
            const shown = code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
            process.stdout.write(
              `\nPairing code: ${shown}\nOn your phone: WhatsApp → Settings → Linked devices → Link a device → "Link with phone number instead", then enter the code.\n`,
            );
          },
        });
        process.stdout.write(
          result.status === "linked"
            ? `Linked as ${result.user}. Start the gateway with WHATSAPP_ENABLED=true.\n`
            : `Already linked as ${result.user}. To link another account, run \`herald whatsapp unlink\` first.\n`,
        );
      }),
    );

  whatsapp
    .command("unlink")
    .description("log this Herald out of WhatsApp and delete its saved credentials")
    .action(
      run(async () => {
        const { authDir, logger } = context();
        const { unlinkWhatsApp } = await import("../../adapters/whatsapp/index.js");
        const result = await unlinkWhatsApp({ authDir, logger });
        const message = {
          "logged-out": "Logged out of WhatsApp and deleted the saved credentials.",
          "not-linked": "WhatsApp was not linked; nothing to do.",
          "deleted-offline": `Deleted the saved credentials, but could not log out on WhatsApp (${"reason" in result ? result.reason : ""}). Remove the device on your phone: WhatsApp → Settings → Linked devices.`,
        }[result.status];
        process.stdout.write(`${message}\n`);
      }),
    );
}
