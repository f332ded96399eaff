/** The one error boundary of every `herald` subcommand. */
import { ConfigError, describeError } from "../../core/errors.js";

export interface CliActionOptions {
  /**
   * End the process when the body settles: for commands that open connections or timers a failure
   * could leave behind (the gateway, WhatsApp linking). Otherwise only `process.exitCode` is set, so
   * tests can run commands in-process. @defaultValue false
   */
  exit?: boolean;
}

/**
 * Wraps a subcommand body: a ConfigError prints the key and the fix and exits with code 2, any other
 * error prints its message and exits with code 1.
 */
export function cliAction<A extends unknown[]>(
  fn: (...args: A) => Promise<void> | void,
  options: CliActionOptions = {},
): (...args: A) => Promise<void> {
  const finish = (code: number) => {
    if (options.exit) process.exit(code);
    process.exitCode = code;
  };
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`Configuration error (${err.key}): ${err.message}\n`);
        finish(2);
        return;
      }
      process.stderr.write(`${err instanceof Error ? err.message : describeError(err)}\n`);
      finish(1);
    }
  };
}
