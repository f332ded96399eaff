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

const redactPaths = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers.${k.toLowerCase()}`]);

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
