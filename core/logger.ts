import { pino } from "pino";

/** The logger every part takes by injection. pino's own type; `child()` adds context fields. */
export type Logger = pino.Logger;

/** Field names whose values never reach a log line, at any depth we log. */
const SECRET_KEYS = [
  "token",
  "botToken",
  "appToken",
  "apiKey",
  "api_key",
  "key",
  "password",
  "secret",
  "signingSecret",
  "accessToken",
  "authorization",
  "Authorization",
  "cookie",
];

// Top level and one level down (`{ config: { token } }`) plus request headers. Deeper wildcards made every
// `child()` several times dearer (each child compiles the redaction), and we never log deeper secrets.
const redactPaths = [
  ...new Set(
    SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `headers.${k.toLowerCase()}`, `*.headers.${k.toLowerCase()}`]),
  ),
];

/**
 * Builds the process logger. Secrets are redacted by field name; messages are constant strings and
 * context goes in the fields object (`log.info({ chat }, "turn started")`).
 * @param level pino level. @defaultValue "info"
 */
export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  const opts: pino.LoggerOptions = {
    level: options.level ?? "info",
    redact: { paths: redactPaths, censor: "[redacted]" },
    base: undefined,
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/** A logger that drops everything (unit tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

const LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace"]);

/**
 * `parent.child(bindings)`, built only when something is logged at an enabled level. A pino child
 * compiles the redaction for itself (~15 KB and several µs), which a per-turn child pays on every turn
 * even when nothing is ever logged at the configured level.
 */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const real = () => {
    child ??= parent.child(bindings);
    return child;
  };
  const noop = () => {};
  return new Proxy(parent, {
    get(_target, prop) {
      if (typeof prop === "string" && LEVELS.has(prop) && !child && !parent.isLevelEnabled(prop)) return noop;
      const target = real();
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
