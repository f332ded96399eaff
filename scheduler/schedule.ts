/**
 * Schedule strings and schedule math. Cron expressions are parsed and stepped by croner (time zones,
 * DST); intervals and one-shots are plain arithmetic. Every function here is pure.
 */
import { Cron } from "croner";
import { HeraldError } from "../core/errors.js";
import { assertTimeZone } from "../core/time-zone.js";
import type { MissedRunPolicy, Schedule } from "./types.js";

/** The shortest interval a schedule may have. */
export const MIN_INTERVAL_MS = 60_000;

const UNIT_MS: Record<string, number> = {
  // Seconds parse so that "every 10s" is refused as too short rather than as unreadable.
  s: 1_000,
  sec: 1_000,
  secs: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

const FORMS =
  'Use a 5-field cron expression ("0 8 * * 1-5"), an interval ("30m", "every 2h"), a delay ("in 20m") or a date-time ("2025-06-01T08:00").';

function invalid(message: string): HeraldError {
  return new HeraldError(message, { code: "invalid_input" });
}

/** `20m`, `2 hours`, `1d` → ms; undefined when it is not a duration. */
function parseDuration(text: string): number | undefined {
  const m = /^(\d+)?\s*([a-z]+)$/.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  const unit = UNIT_MS[m[2]!];
  if (unit === undefined) return undefined;
  // "every hour" has no number: one unit.
  return (m[1] === undefined ? 1 : Number(m[1])) * unit;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Throws unless `timezone` is an IANA zone this runtime knows. */
export function assertTimezone(timezone: string): void {
  try {
    assertTimeZone(timezone);
  } catch {
    throw invalid(`"${timezone}" is not a known time zone. Use an IANA name such as Europe/Berlin or UTC.`);
  }
}

function cronOf(expr: string, timezone: string): Cron {
  return new Cron(expr, { timezone, paused: true, mode: "5-part" });
}

/**
 * Parses a schedule as a person writes it. Cron expressions and date-times without an offset are read
 * in `timezone`; intervals are anchored at `now` (the first run is one interval later).
 * @throws HeraldError `invalid_input` saying what is wrong and which forms work.
 */
export function parseSchedule(text: string, options: { timezone: string; now: number }): Schedule {
  const { timezone, now } = options;
  const raw = text.trim().replace(/\s+/g, " ");
  if (!raw) throw invalid(`The schedule is empty. ${FORMS}`);
  const lower = raw.toLowerCase();
  assertTimezone(timezone);

  if (lower.startsWith("in ")) {
    const delayMs = parseDuration(lower.slice(3));
    if (delayMs === undefined)
      throw invalid(`Can't read the delay in "${raw}". Write it like "in 20m" or "in 2 hours".`);
    if (delayMs < MIN_INTERVAL_MS) throw invalid(`"${raw}" is too soon: the shortest delay is 1 minute.`);
    return { kind: "once", at: now + delayMs };
  }

  const interval = lower.startsWith("every ")
    ? lower.slice(6)
    : /^\d+\s*[a-z]+$/.test(lower)
      ? lower
      : undefined;
  if (interval !== undefined) {
    const everyMs = parseDuration(interval);
    if (everyMs === undefined)
      throw invalid(`Can't read the interval in "${raw}". Write it like "30m", "every 2h" or "every day".`);
    if (everyMs < MIN_INTERVAL_MS) throw invalid(`"${raw}" is too short: the shortest interval is 1 minute.`);
    return { kind: "every", everyMs, anchorAt: now };
  }

  const iso = ISO_DATE_TIME.exec(raw);
  if (iso) {
    const at = iso[1] ? Date.parse(raw.replace(" ", "T")) : isoInZone(raw.replace(" ", "T"), timezone);
    if (!Number.isFinite(at)) throw invalid(`"${raw}" is not a valid date-time. ${FORMS}`);
    if (at <= now)
      throw invalid(`"${raw}" is in the past. Give a future date-time, or a delay like "in 20m".`);
    return { kind: "once", at };
  }

  const fields = raw.split(" ");
  if (fields.length === 5 || (fields.length === 1 && raw.startsWith("@"))) {
    let cron: Cron;
    try {
      cron = cronOf(raw, timezone);
    } catch (err) {
      const why = (err instanceof Error ? err.message : String(err)).replace(/^Cron\w*:\s*/, "");
      throw invalid(`The cron expression "${raw}" is invalid: ${why}. ${FORMS}`);
    }
    if (!cron.nextRun(new Date(now)))
      throw invalid(`The cron expression "${raw}" never fires (no such date).`);
    return { kind: "cron", expr: raw, timezone };
  }
  if (fields.length === 6 || fields.length === 7) {
    throw invalid(
      `"${raw}" has ${fields.length} fields; cron expressions here have 5 (minute hour day month weekday), no seconds.`,
    );
  }
  throw invalid(`Can't read the schedule "${raw}". ${FORMS}`);
}

/** A local date-time in `timezone` → epoch ms (croner resolves the offset, DST included). */
function isoInZone(local: string, timezone: string): number {
  try {
    const at = new Cron(local, { timezone, paused: true, allowPast: true }).nextRun(new Date(0));
    return at ? at.getTime() : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

// Building a Cron parses its pattern: keep one per expression and zone.
const crons = new Map<string, Cron>();

function cachedCron(expr: string, timezone: string): Cron {
  const key = `${timezone}\u0000${expr}`;
  let cron = crons.get(key);
  if (!cron) {
    cron = cronOf(expr, timezone);
    if (crons.size > 500) crons.clear();
    crons.set(key, cron);
  }
  return cron;
}

/** The first occurrence strictly after `after`; undefined when there is none (a fired one-shot). */
export function nextOccurrence(schedule: Schedule, after: number): number | undefined {
  switch (schedule.kind) {
    case "once":
      return schedule.at > after ? schedule.at : undefined;
    case "every": {
      const { everyMs, anchorAt } = schedule;
      const k = after < anchorAt ? 1 : Math.floor((after - anchorAt) / everyMs) + 1;
      return anchorAt + Math.max(1, k) * everyMs;
    }
    case "cron":
      return cachedCron(schedule.expr, schedule.timezone).nextRun(new Date(after))?.getTime();
  }
}

/**
 * The latest occurrence in `[from, now]`, or `from` when none lies after it. `from` is an occurrence
 * that came due (the tick a scheduler delivered); after downtime later ones may have come due too.
 */
export function latestOccurrence(schedule: Schedule, from: number, now: number): number {
  if (now <= from) return from;
  switch (schedule.kind) {
    case "once":
      return from;
    case "every": {
      const { everyMs, anchorAt } = schedule;
      const latest = anchorAt + Math.floor((now - anchorAt) / everyMs) * everyMs;
      return Math.max(from, latest);
    }
    case "cron": {
      const [prev] = cachedCron(schedule.expr, schedule.timezone).previousRuns(1, new Date(now + 1));
      return Math.max(from, prev?.getTime() ?? from);
    }
  }
}

/** The time from the occurrence `at` to the next one (the period there); Infinity for a one-shot. */
export function periodAt(schedule: Schedule, at: number): number {
  if (schedule.kind === "every") return schedule.everyMs;
  if (schedule.kind === "once") return Number.POSITIVE_INFINITY;
  const next = nextOccurrence(schedule, at);
  return next === undefined ? Number.POSITIVE_INFINITY : next - at;
}

/** Lateness under which even a `skip` job runs its tick (timer jitter, a busy process). */
export const ON_TIME_MS = 60_000;

/** Whether a tick `lateMs` late runs under `policy` (see `MissedRunPolicy`). */
export function runsWhenLate(policy: MissedRunPolicy, lateMs: number, periodMs: number): boolean {
  if (policy === "run") return true;
  if (policy === "skip") return lateMs <= Math.min(ON_TIME_MS, periodMs / 2);
  return lateMs <= periodMs / 2;
}

/** `45m`, `2h`, `1d 6h`, `90m` stays `1h 30m`. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / 60_000);
  for (const [unit, size] of [
    ["d", 1440],
    ["h", 60],
    ["m", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join(" ") || `${Math.round(ms / 1000)}s`;
}

/** `2025-06-01 08:00 Europe/Berlin` (minute precision, in `timezone`). */
export function formatTime(at: number, timezone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")} ${timezone}`;
}

/** The schedule in words, for lists. */
export function describeSchedule(schedule: Schedule, timezone: string): string {
  switch (schedule.kind) {
    case "cron":
      return `cron ${schedule.expr} (${schedule.timezone})`;
    case "every":
      return `every ${formatDuration(schedule.everyMs)}`;
    case "once":
      return `once at ${formatTime(schedule.at, timezone)}`;
  }
}
