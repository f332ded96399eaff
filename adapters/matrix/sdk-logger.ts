/**
 * matrix-js-sdk logs through a process-wide `loglevel` logger straight to the console, at debug level.
 * This sends those lines to our pino logger at debug instead (the adapter logs what matters itself),
 * with anything token-like scrubbed.
 */
import { type Logger as SdkLogger, logger as sdkRootLogger } from "matrix-js-sdk/lib/logger.js";
import type { Logger } from "../../core/logger.js";

const SECRET = /(access_token=|Bearer\s+)[^\s&"']+/gi;

function render(args: unknown[]): string {
  return args
    .map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : typeof a === "string" ? a : safeJson(a)))
    .join(" ")
    .replace(SECRET, "$1[redacted]")
    .slice(0, 2000);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A matrix-js-sdk `Logger` writing to pino at debug. */
export function sdkLogger(log: Logger, namespace = "matrix-sdk"): SdkLogger {
  const write =
    (level: string) =>
    (...args: unknown[]): void => {
      if (log.isLevelEnabled("debug"))
        log.debug({ sdk: namespace, sdkLevel: level, detail: render(args) }, "matrix sdk log");
    };
  return {
    trace: write("trace"),
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    getChild: (child: string) => sdkLogger(log, `${namespace}${child}`),
  };
}

/**
 * Points the SDK's process-wide logger (used by its sync loop and stores) at `log`. Idempotent; the last
 * adapter to start wins, which is fine with one Matrix adapter per process.
 */
export function installSdkLogger(log: Logger): void {
  const target = sdkLogger(log);
  const root = sdkRootLogger as unknown as {
    methodFactory: (method: string) => (...args: unknown[]) => void;
    rebuild?: () => void;
    setLevel: (level: number | string, persist?: boolean) => void;
  };
  root.methodFactory = (method: string) => {
    const fn = (target as unknown as Record<string, ((...args: unknown[]) => void) | undefined>)[method];
    return fn ?? target.debug;
  };
  // Re-applying the level makes loglevel rebuild its methods with the new factory.
  root.setLevel("debug", false);
}
