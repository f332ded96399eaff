/**
 * Usage sums over long periods without scanning every row on each view: whole UTC days before today are
 * summed once each (one bounded query per day, yielding to the event loop between days, so a first
 * view of a large state file never blocks turns for long) and kept; today is summed live. A usage row
 * is written when its turn commits, so a past day no longer changes.
 */
import type { UsageLedger, UsageLine } from "../../sessions/types.js";

const DAY_MS = 86_400_000;
/** Days kept per grouping (a bit over a year). */
const MAX_DAYS = 400;

/** What the rollup reads. */
export interface UsageSource {
  summary: UsageLedger["summary"];
  /** When the oldest usage row was written, or undefined without any. */
  firstAt(): number | undefined;
}

/** Per-day sums, cached. */
export class UsageRollup {
  readonly #source: UsageSource;
  readonly #now: () => number;
  readonly #days = new Map<string, UsageLine[]>();

  constructor(source: UsageSource, now: () => number = Date.now) {
    this.#source = source;
    this.#now = now;
  }

  /** Sums from the start of the UTC day `days - 1` days before today (or of the first usage: "all") to now. */
  async summary(days: number | "all", by: "model" | "user"): Promise<UsageLine[]> {
    const now = this.#now();
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    const first = days === "all" ? this.#source.firstAt() : today - (days - 1) * DAY_MS;
    if (first === undefined) return [];
    const lines: UsageLine[] = [...this.#source.summary({ since: today, by })];
    for (let day = Math.floor(first / DAY_MS) * DAY_MS; day < today; day += DAY_MS) {
      const key = `${by}:${day}`;
      let sums = this.#days.get(key);
      if (!sums) {
        sums = this.#source.summary({ since: day, until: day + DAY_MS, by });
        this.#days.set(key, sums);
        if (this.#days.size > 2 * MAX_DAYS) this.#days.delete(this.#days.keys().next().value!);
        await new Promise((resolve) => setImmediate(resolve));
      }
      lines.push(...sums);
    }
    return merge(lines, by);
  }
}

/** Lines of the same model (and user) summed; the most tokens in first. */
function merge(lines: readonly UsageLine[], by: "model" | "user"): UsageLine[] {
  const merged = new Map<string, UsageLine>();
  for (const l of lines) {
    const key = by === "user" ? `${l.user}\u0000${l.model}` : l.model;
    const m = merged.get(key);
    if (!m) merged.set(key, { ...l });
    else {
      m.promptTokens += l.promptTokens;
      m.completionTokens += l.completionTokens;
      m.cachedTokens += l.cachedTokens;
      m.calls += l.calls;
    }
  }
  return [...merged.values()].sort(
    (a, b) => b.promptTokens - a.promptTokens || a.model.localeCompare(b.model),
  );
}
