/** What every step of the wizard shares: the prompter, the files, and running one live check. */
import type { SetupFiles } from "./files.js";
import { CheckFailed, type Prompter } from "./types.js";

export interface StepContext {
  p: Prompter;
  files: SetupFiles;
  /** How long "send any message to your bot now" waits. @defaultValue 120_000 */
  ownerWaitMs: number;
}

/**
 * Runs a live check with a spinner. Interactive: a failure is shown and the user may try again
 * (`retry` asks the answers again) or skip (undefined). Non-interactive: a failure ends the run (the
 * files stay as they were).
 */
export async function checked<T>(
  ctx: StepContext,
  label: string,
  run: () => Promise<T>,
  describe: (value: T) => string,
): Promise<T | undefined> {
  const spin = ctx.p.spinner();
  spin.start(label);
  try {
    const value = await run();
    spin.stop(describe(value));
    return value;
  } catch (err) {
    spin.fail(`${label}: failed`);
    if (!(err instanceof CheckFailed)) throw err;
    if (!ctx.p.interactive) throw err;
    ctx.p.say("error", err.message);
    return undefined;
  }
}

/** Asks again after a failed check (interactive only). */
export async function tryAgain(ctx: StepContext, what: string): Promise<boolean> {
  if (!ctx.p.interactive) return false;
  return ctx.p.confirm({ key: "retry", message: `Enter the ${what} again? (No skips it)`, initial: true });
}

/** A secret: the new answer, else the one in .env already. */
export async function secret(
  ctx: StepContext,
  key: string,
  env: string,
  message: string,
): Promise<{ value: string | undefined; isNew: boolean }> {
  const current = ctx.files.env(env);
  const given = await ctx.p.password({ key, message, hasCurrent: Boolean(current) });
  return given ? { value: given, isNew: true } : { value: current, isNew: false };
}
