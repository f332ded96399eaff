/**
 * What a gateway or worker process does with a promise rejection nobody handled (a plugin's, an SDK's):
 * it logs it with its stack and keeps running, counted in `herald_unhandled_rejections_total`. Node's
 * default ends the process, and with it every chat's running turn, for what is nearly always a stray
 * network error in code that forgot a `catch`. An uncaught exception still ends the process (its state
 * is unknown), logged as fatal first. `NODE_OPTIONS=--unhandled-rejections=strict` makes rejections
 * fatal again for an operator who prefers a supervisor's restart.
 */
import { describeError } from "./errors.js";
import type { Logger } from "./logger.js";

let rejections = 0;

/** Unhandled rejections this process has logged and survived. */
export function unhandledRejections(): number {
  return rejections;
}

const stackOf = (value: unknown): string | undefined =>
  value instanceof Error ? value.stack?.split("\n").slice(1, 12).join("\n") : undefined;

/** Installs the process's handlers; returns the function that removes them. Call once per process. */
export function guardProcess(logger: Logger): () => void {
  const onRejection = (reason: unknown) => {
    rejections++;
    logger.error(
      { error: describeError(reason), stack: stackOf(reason), unhandledRejections: rejections },
      "unhandled promise rejection (a bug, please report it); Herald keeps running",
    );
  };
  const onException = (err: unknown, origin: string) => {
    logger.fatal(
      { error: describeError(err), stack: stackOf(err), origin },
      "uncaught exception; Herald exits",
    );
    logger.flush();
  };
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtExceptionMonitor", onException);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtExceptionMonitor", onException);
  };
}
