/**
 * Names BullJobQueue uses in Redis: BullMQ job ids made from the caller's ids, and the keys and
 * channels of per-orderingKey ordering and cancellation, all under the queue's prefix.
 */
import { createHash } from "node:crypto";

/** The BullMQ queue turns go through. */
export const QUEUE_NAME = "turns";

/**
 * BullMQ job ids may not contain ':' nor be integers: escape '%' and ':' and add a prefix. Reversible,
 * so events map back to the caller's id without a lookup.
 */
export function toBullId(id: string): string {
  return `t_${id.replaceAll("%", "%25").replaceAll(":", "%3A")}`;
}

/** The caller's id of a BullMQ job id, or undefined for ids this queue did not make. */
export function fromBullId(bullId: string): string | undefined {
  if (!bullId.startsWith("t_")) return undefined;
  return bullId.slice(2).replaceAll("%3A", ":").replaceAll("%25", "%");
}

/** Keys and channels of one prefix. */
export class RedisNames {
  readonly #base: string;

  constructor(prefix: string) {
    this.#base = `${prefix}:herald:${QUEUE_NAME}`;
  }

  /** The list of job ids of one orderingKey, in enqueue order. */
  order(orderingKey: string): string {
    return `${this.#base}:order:${keyHash(orderingKey)}`;
  }

  /** The lock the running job of one orderingKey holds. */
  lock(orderingKey: string): string {
    return `${this.#base}:lock:${keyHash(orderingKey)}`;
  }

  /** Set when a job is cancelled; a worker checks it before it starts the job and while it runs. */
  cancelled(bullId: string): string {
    return `${this.#base}:cancelled:${bullId}`;
  }

  /** A pub/sub channel: cancellations, progress, or the gateway's announcements to workers. */
  channel(name: "cancel" | "progress" | "announcements"): string {
    return `${this.#base}:${name}`;
  }
}

/** Ordering keys are hashed: session keys are long and may hold characters like `{`. */
function keyHash(orderingKey: string): string {
  return createHash("sha1").update(orderingKey).digest("hex");
}
