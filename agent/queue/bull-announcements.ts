/**
 * The Redis side of `JobQueue.announce` and `onAnnouncement`: JSON messages on one pub/sub channel of
 * the queue's prefix, checked with zod on receipt, so a message a worker does not understand (another
 * version's, or anything else published there) is logged and skipped instead of acted on.
 */
import { z } from "zod";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { WorkerAnnouncement } from "../../core/turn.js";

/** An announcement as it travels: the `WorkerAnnouncement` union, nothing else. */
export const workerAnnouncementSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("session-ended"),
    sessionKey: z.string().min(1),
    sessionId: z.string().min(1).optional(),
  }),
  z.object({ type: z.literal("reload"), what: z.enum(["mcp", "plugins"]) }),
]) satisfies z.ZodType<WorkerAnnouncement>;

/** The text published for `event`. */
export function encodeAnnouncement(event: WorkerAnnouncement): string {
  return JSON.stringify(event);
}

/** How much of a malformed message a log line quotes. */
const QUOTED_CHARS = 200;

/** The listeners of one queue's announcements. A listener that throws is logged; the others still hear. */
export class Announcements {
  readonly #listeners = new Set<(event: WorkerAnnouncement) => void>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Adds a listener; returns its removal. The same function added twice hears each message twice. */
  add(listener: (event: WorkerAnnouncement) => void): () => void {
    const entry = (event: WorkerAnnouncement) => listener(event);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** One message of the channel: parsed, checked and passed to every listener, or logged and skipped. */
  receive(message: string): void {
    const event = parseAnnouncement(message);
    if (!event.ok) {
      this.#logger.warn(
        { received: message.slice(0, QUOTED_CHARS), problem: event.problem },
        "malformed announcement skipped",
      );
      return;
    }
    for (const listener of this.#listeners) {
      try {
        listener(event.value);
      } catch (err) {
        this.#logger.error(
          { announcement: event.value.type, err: describeError(err) },
          "announcement listener threw",
        );
      }
    }
  }
}

function parseAnnouncement(
  message: string,
): { ok: true; value: WorkerAnnouncement } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch (err) {
    return { ok: false, problem: `not JSON: ${describeError(err)}` };
  }
  const parsed = workerAnnouncementSchema.safeParse(json);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, problem: z.prettifyError(parsed.error) };
}
