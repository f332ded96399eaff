/**
 * When an active session is stale. Pure functions of the session's last activity, the policy and the
 * clock; the daily boundary is a wall-clock hour in a named time zone, computed with `Intl` so it stays
 * right across daylight-saving changes.
 */
import { HeraldError } from "../core/errors.js";
import { isUtcZone, systemTimeZone } from "../core/time-zone.js";
import type { ResetPolicy } from "./types.js";

/** The policy used when the config says nothing: reset after a day of silence or at 04:00 local time. */
export const DEFAULT_RESET_POLICY: ResetPolicy = { mode: "both", idleMinutes: 1440, atHour: 4 };

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-US", {
        timeZone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    } catch (cause) {
      throw new HeraldError(
        `Unknown time zone "${timeZone}" in the session reset policy: use an IANA name such as "Europe/Berlin".`,
        { code: "config_invalid", cause },
      );
    }
    formatters.set(timeZone, f);
  }
  return f;
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallTime(instant: number, timeZone: string): WallTime {
  if (isUtcZone(timeZone)) {
    const d = new Date(instant);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
    };
  }
  const out: WallTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type in out) out[part.type as keyof WallTime] = Number(part.value);
  }
  return out;
}

/** The zone's offset from UTC at `instant`, in ms (positive east of Greenwich). */
function offsetAt(instant: number, timeZone: string): number {
  const w = wallTime(instant, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant the zone's clocks show `year-month-day hour:00`. An hour skipped by a DST jump maps to the
 * moment of the jump; an hour that occurs twice maps to its first occurrence.
 */
export function zonedHourToInstant(
  year: number,
  month: number,
  day: number,
  hour: number,
  timeZone: string,
): number {
  const naive = Date.UTC(year, month - 1, day, hour);
  // Offsets a day either side cover both sides of any transition near this hour.
  const candidates = [naive - offsetAt(naive - DAY_MS, timeZone), naive - offsetAt(naive + DAY_MS, timeZone)];
  const exact = candidates.filter((t) => {
    const w = wallTime(t, timeZone);
    return w.year === year && w.month === month && w.day === day && w.hour === hour && w.minute === 0;
  });
  return exact.length > 0 ? Math.min(...exact) : Math.max(...candidates);
}

/**
 * Boundaries are at least 22 hours apart even across DST shifts, so a computed boundary answers every
 * `now` up to 22 hours after it without formatting dates again (`open` asks on every turn).
 */
const BOUNDARY_REUSE_MS = 22 * 3_600_000;
const boundaryCache = new Map<string, number>();

/** The latest daily boundary (`atHour`:00 in `timeZone`) at or before `now`. */
export function lastDailyBoundary(now: number, atHour: number, timeZone: string): number {
  const cacheKey = `${timeZone}|${atHour}`;
  const cached = boundaryCache.get(cacheKey);
  if (cached !== undefined && cached <= now && now - cached < BOUNDARY_REUSE_MS) return cached;
  const boundary = computeLastDailyBoundary(now, atHour, timeZone);
  boundaryCache.set(cacheKey, boundary);
  return boundary;
}

function computeLastDailyBoundary(now: number, atHour: number, timeZone: string): number {
  const today = wallTime(now, timeZone);
  const boundary = zonedHourToInstant(today.year, today.month, today.day, atHour, timeZone);
  if (boundary <= now) return boundary;
  const yesterday = new Date(Date.UTC(today.year, today.month - 1, today.day - 1));
  return zonedHourToInstant(
    yesterday.getUTCFullYear(),
    yesterday.getUTCMonth() + 1,
    yesterday.getUTCDate(),
    atHour,
    timeZone,
  );
}

/** The process's IANA zone (what `timezone` defaults to). */
export function processTimeZone(): string {
  return systemTimeZone();
}

/**
 * Why a session last active at `lastActiveAt` is stale at `now` under `policy`, or undefined if it is
 * still current. `idle`: silent for more than `idleMinutes`. `daily`: `atHour` o'clock in the policy's
 * time zone passed since. With `both`, idleness is reported first. Throws a `config_invalid` HeraldError
 * for an unknown time zone.
 */
export function staleReason(
  lastActiveAt: number,
  policy: ResetPolicy,
  now: number = Date.now(),
): "idle" | "daily" | undefined {
  const { mode } = policy;
  if ((mode === "idle" || mode === "both") && now - lastActiveAt > policy.idleMinutes * 60_000) return "idle";
  if (mode === "daily" || mode === "both") {
    const boundary = lastDailyBoundary(now, policy.atHour, policy.timezone ?? processTimeZone());
    if (lastActiveAt < boundary) return "daily";
  }
  return undefined;
}
