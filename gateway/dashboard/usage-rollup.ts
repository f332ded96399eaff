/**
 * Usage sums over long periods without scanning every row on each view: whole UTC days before today are
 * summed once each (one bounded query per day, yielding to the event loop between days, so a first
 * view of a large state file never blocks turns for long) and kept; today is summed live. A usage row
 * is written when its turn commits, so a past day no longer changes; only its split by agent
 * does when `herald sessions prune` deletes sessions, and a cached day keeps the split it had.
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

  /**
   * Sums from the start of the UTC day `days - 1` days before today (or of the first usage: "all") to
   * now; `agent` keeps one agent's.
   */
  async summary(
    days: number | "all",
    by: "model" | "user" | "agent",
    agent?: string | undefined,
  ): Promise<UsageLine[]> {
    const now = this.#now();
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    const first = days === "all" ? this.#source.firstAt() : today - (days - 1) * DAY_MS;
    if (first === undefined) return [];
    const lines: UsageLine[] = [...this.#source.summary({ since: today, by, agent })];
    for (let day = Math.floor(first / DAY_MS) * DAY_MS; day < today; day += DAY_MS) {
      const key = `${by}:${agent ?? ""}:${day}`;
      let sums = this.#days.get(key);
      if (!sums) {
        sums = this.#source.summary({ since: day, until: day + DAY_MS, by, agent });
        this.#days.set(key, sums);
        if (this.#days.size > 2 * MAX_DAYS) this.#days.delete(this.#days.keys().next().value!);
        await new Promise((resolve) => setImmediate(resolve));
      }
      lines.push(...sums);
    }
    return merge(lines, by);
  }
}

/** Lines of the same model (and user or agent) summed; the most tokens in first (by agent: within each agent). */
function merge(lines: readonly UsageLine[], by: "model" | "user" | "agent"): UsageLine[] {
  const merged = new Map<string, UsageLine>();
  for (const l of lines) {
    const key = by === "model" ? l.model : `${by === "user" ? l.user : l.agent}\u0000${l.model}`;
    const m = merged.get(key);
    if (!m) merged.set(key, { ...l });
    else {
      m.promptTokens += l.promptTokens;
      m.completionTokens += l.completionTokens;
      m.cachedTokens += l.cachedTokens;
      m.cacheWriteTokens = (m.cacheWriteTokens ?? 0) + (l.cacheWriteTokens ?? 0);
      m.reasoningTokens = (m.reasoningTokens ?? 0) + (l.reasoningTokens ?? 0);
      m.calls += l.calls;
    }
  }
  // By agent, each agent's lines together (the unknown one last), as the ledger orders them.
  const group = (l: UsageLine) => (by === "agent" ? `${l.agent === "?" ? 1 : 0}${l.agent}` : "");
  return [...merged.values()].sort(
    (a, b) =>
      group(a).localeCompare(group(b)) || b.promptTokens - a.promptTokens || a.model.localeCompare(b.model),
  );
}
