/**
 * The Slack SDKs' logger interface on top of our pino logger. The SDKs log free-form strings; we log a
 * constant message with the string in a field, with anything that looks like a Slack token scrubbed.
 * Their errors are logged again, with context, where the adapter handles them, so SDK errors go out as
 * warnings and SDK info as debug.
 */
import { LogLevel, type Logger as SlackLogger } from "@slack/bolt";
import type { Logger } from "../../core/logger.js";

const TOKEN = /\bx(?:ox[abprs]|app)-[A-Za-z0-9-]+/g;

function detail(parts: unknown[]): string {
  return parts
    .map((p) => (p instanceof Error ? `${p.name}: ${p.message}` : typeof p === "string" ? p : safeJson(p)))
    .join(" ")
    .replace(TOKEN, "[redacted]")
    .slice(0, 2000);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** Wraps `logger` for bolt, the WebClient and the Socket Mode client. */
export function slackSdkLogger(logger: Logger, name = "slack-sdk"): SlackLogger {
  let log = logger.child({ sdk: name });
  return {
    debug: (...msg: unknown[]) => log.trace({ detail: detail(msg) }, "slack sdk debug"),
    info: (...msg: unknown[]) => log.debug({ detail: detail(msg) }, "slack sdk info"),
    warn: (...msg: unknown[]) => log.warn({ detail: detail(msg) }, "slack sdk warning"),
    error: (...msg: unknown[]) => log.warn({ detail: detail(msg) }, "slack sdk error"),
    // Levels are pino's business; the SDKs only read them to decide whether to build debug strings.
    setLevel: () => {},
    getLevel: () => (log.isLevelEnabled("trace") ? LogLevel.DEBUG : LogLevel.INFO),
    setName: (n: string) => {
      log = logger.child({ sdk: n });
    },
  };
}
