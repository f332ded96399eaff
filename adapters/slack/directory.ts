/**
 * Cached look-up of a sender's display name (`users.info`) for events that carry no `user_profile`.
 * Best-effort: a failure (missing users:read scope, rate limit) gives undefined and is logged once.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { SlackApi } from "./api.js";

interface UserInfo {
  user?: { name?: string; real_name?: string; profile?: { display_name?: string; real_name?: string } };
}

/** Least-recently-set entries go first once `max` is passed. */
class BoundedCache<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>();
  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
  ) {}
  get(key: string, now: number): V | undefined {
    const hit = this.map.get(key);
    if (!hit || hit.expiresAt < now) return undefined;
    return hit.value;
  }
  set(key: string, value: V, now: number): void {
    this.map.delete(key);
    this.map.set(key, { value, expiresAt: now + this.ttlMs });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

export class SlackDirectory {
  private readonly names = new BoundedCache<string | undefined>(5000, 6 * 3600_000);
  private readonly warned = new Set<string>();

  constructor(
    private readonly api: SlackApi,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The user's display name, real name or handle. */
  async userName(userId: string): Promise<string | undefined> {
    const cached = this.names.get(userId, this.now());
    if (cached !== undefined) return cached || undefined;
    try {
      const { user } = await this.api.call<UserInfo>("users.info", { user: userId });
      const name = user?.profile?.display_name || user?.profile?.real_name || user?.real_name || user?.name;
      this.names.set(userId, name ?? "", this.now());
      return name || undefined;
    } catch (err) {
      this.warnOnce("users.info", err);
      return undefined;
    }
  }

  private warnOnce(method: string, err: unknown): void {
    const level = this.warned.has(method) ? "debug" : "warn";
    this.warned.add(method);
    this.logger[level]({ method, error: describeError(err) }, "slack look-up failed; going on without it");
  }
}
