/** `herald pairing list|approve|revoke`: admit unknown users who asked for access. */
import type { Command } from "commander";
import { loadConfig } from "../config.js";
import { chatParser } from "../platforms.js";
import { cliAction } from "./action.js";
import { openState } from "./state.js";

const config = () => loadConfig();
const action = <A extends unknown[]>(fn: (...args: A) => Promise<void> | void) =>
  cliAction(fn, { exit: true });

/** Adds `herald pairing` to the program. */
export function registerPairingCommands(program: Command): void {
  const pairing = program.command("pairing").description("admit unknown users who asked for access");
  pairing.command("list").action(
    action(() => {
      const state = openState(config());
      const pending = state.pairing.pending();
      process.stdout.write(
        pending.length
          ? "Pending requests (codes are shown only to the requester):\n"
          : "No pending requests.\n",
      );
      for (const r of pending) {
        process.stdout.write(
          `  ${r.platform}:${r.userId}${r.userName ? ` (${r.userName})` : ""}  expires ${new Date(r.expiresAt).toISOString()}\n`,
        );
      }
      const approved = state.pairing.approved();
      if (approved.length) process.stdout.write("Approved:\n");
      for (const a of approved) process.stdout.write(`  ${a.platform}:${a.userId}\n`);
      state.close();
    }),
  );
  pairing
    .command("approve <codeOrUser>")
    .description("approve by the code the user got, or directly as platform:userId")
    .action(
      action((value: string) => {
        const state = openState(config());
        try {
          const direct = value.includes(":") ? chatParser(value) : undefined;
          if (direct) {
            state.pairing.allow(direct.platform, direct.chatId);
            process.stdout.write(`Approved ${direct.platform}:${direct.chatId}.\n`);
            return;
          }
          const who = state.pairing.approve(value);
          if (!who)
            throw new Error(
              `No pending request has code ${value} (codes expire after 1 hour). \`herald pairing list\` shows requests.`,
            );
          process.stdout.write(`Approved ${who.platform}:${who.userId}.\n`);
        } finally {
          state.close();
        }
      }),
    );
  pairing
    .command("revoke <user>")
    .description("revoke platform:userId")
    .action(
      action((value: string) => {
        const who = chatParser(value);
        if (!who) throw new Error("Give the user as platform:userId, e.g. telegram:12345.");
        const state = openState(config());
        const removed = state.pairing.revoke(who.platform, who.chatId);
        state.close();
        process.stdout.write(removed ? `Revoked ${value}.\n` : `${value} was not approved.\n`);
      }),
    );
}
