/**
 * Schedule strings and schedule math: every form parses (or is refused with a message saying what is
 * wrong), and occurrences fall on the right instants, DST changes in a named zone included.
 */
import { describe, expect, it } from "vitest";
import { skipTicksAfter } from "../../scheduler/cron-service.js";
import {
  latestOccurrence,
  nextOccurrence,
  parseSchedule,
  periodAt,
  runsWhenLate,
} from "../../scheduler/schedule.js";
import { parseTargets, resolveTargets } from "../../scheduler/targets.js";
import type { Schedule } from "../../scheduler/types.js";

const NOW = Date.parse("2024-06-03T10:00:00Z"); // a Monday
const MIN = 60_000;
const HOUR = 60 * MIN;
const utc = { timezone: "UTC", now: NOW };
const berlin = { timezone: "Europe/Berlin", now: NOW };

/** The next `n` occurrences after `from`, as ISO strings. */
function occurrences(schedule: Schedule, from: number, n: number): string[] {
  const out: string[] = [];
  let at = from;
  for (let i = 0; i < n; i++) {
    const next = nextOccurrence(schedule, at);
    if (next === undefined) break;
    out.push(new Date(next).toISOString());
    at = next;
  }
  return out;
}

describe("parseSchedule", () => {
  it("reads cron expressions in the given zone", () => {
    expect(parseSchedule("0 8 * * 1-5", berlin)).toEqual({
      kind: "cron",
      expr: "0 8 * * 1-5",
      timezone: "Europe/Berlin",
    });
    expect(parseSchedule("  */15   * * * * ", utc)).toEqual({
      kind: "cron",
      expr: "*/15 * * * *",
      timezone: "UTC",
    });
    expect(parseSchedule("@daily", utc)).toMatchObject({ kind: "cron", expr: "@daily" });
  });

  it("reads intervals with and without 'every', anchored at now", () => {
    expect(parseSchedule("30m", utc)).toEqual({ kind: "every", everyMs: 30 * MIN, anchorAt: NOW });
    expect(parseSchedule("every 2h", utc)).toEqual({ kind: "every", everyMs: 2 * HOUR, anchorAt: NOW });
    expect(parseSchedule("every 90 minutes", utc)).toMatchObject({ everyMs: 90 * MIN });
    expect(parseSchedule("every day", utc)).toMatchObject({ everyMs: 24 * HOUR });
    expect(parseSchedule("Every 1 Hour", utc)).toMatchObject({ everyMs: HOUR });
  });

  it("reads delays and date-times as one-shots", () => {
    expect(parseSchedule("in 20m", utc)).toEqual({ kind: "once", at: NOW + 20 * MIN });
    expect(parseSchedule("in 2 hours", utc)).toEqual({ kind: "once", at: NOW + 2 * HOUR });
    expect(parseSchedule("2024-06-04T08:00:00Z", utc)).toEqual({
      kind: "once",
      at: Date.parse("2024-06-04T08:00:00Z"),
    });
    expect(parseSchedule("2024-06-04T08:00+02:00", utc)).toEqual({
      kind: "once",
      at: Date.parse("2024-06-04T06:00:00Z"),
    });
    // Without an offset: local time of the zone (CEST in June).
    expect(parseSchedule("2024-06-04 08:00", berlin)).toEqual({
      kind: "once",
      at: Date.parse("2024-06-04T06:00:00Z"),
    });
    // In winter the same wall time is an hour later in UTC.
    expect(parseSchedule("2024-12-04T08:00", berlin)).toEqual({
      kind: "once",
      at: Date.parse("2024-12-04T07:00:00Z"),
    });
  });

  it.each([
    ["61 * * * *", /cron expression "61 \* \* \* \*" is invalid.*minute/i],
    ["0 25 * * *", /invalid.*hour/i],
    ["0 0 31 2 *", /never fires/],
    ["0 0 0 * * *", /6 fields.*5/],
    ["every 10s", /interval/],
    ["every 30 seconds", /interval/],
    ["in 30s", /delay/],
    ["every 0m", /shortest interval is 1 minute/],
    ["2020-01-01T08:00Z", /in the past/],
    ["2024-13-45T08:00", /not a valid date-time/],
    ["tomorrow at noon", /Can't read the schedule.*cron expression.*interval.*delay.*date-time/],
    ["", /empty/],
  ])("refuses %j saying what is wrong", (text, message) => {
    expect(() => parseSchedule(text, utc)).toThrow(message);
  });

  it("refuses an unknown time zone", () => {
    expect(() => parseSchedule("0 8 * * *", { timezone: "Mars/Olympus", now: NOW })).toThrow(
      /not a known time zone/,
    );
  });
});

describe("occurrences", () => {
  it("a weekday 08:00 cron in Berlin fires at 06:00 UTC in summer, skips the weekend", () => {
    const s = parseSchedule("0 8 * * 1-5", berlin);
    // Friday 2024-06-07 → Monday 2024-06-10.
    expect(occurrences(s, Date.parse("2024-06-06T12:00:00Z"), 3)).toEqual([
      "2024-06-07T06:00:00.000Z",
      "2024-06-10T06:00:00.000Z",
      "2024-06-11T06:00:00.000Z",
    ]);
  });

  it("a daily 08:00 cron keeps local time across the spring and autumn DST changes", () => {
    const s: Schedule = { kind: "cron", expr: "0 8 * * *", timezone: "Europe/Berlin" };
    expect(occurrences(s, Date.parse("2024-03-30T12:00:00Z"), 2)).toEqual([
      "2024-03-31T06:00:00.000Z", // CEST from 31 March
      "2024-04-01T06:00:00.000Z",
    ]);
    expect(occurrences(s, Date.parse("2024-10-26T12:00:00Z"), 2)).toEqual([
      "2024-10-27T07:00:00.000Z", // CET from 27 October
      "2024-10-28T07:00:00.000Z",
    ]);
  });

  it("a time in the spring-forward gap fires once, right after the gap; a repeated autumn time fires once", () => {
    const s: Schedule = { kind: "cron", expr: "30 2 * * *", timezone: "Europe/Berlin" };
    // 02:30 does not exist on 31 March 2024: it runs at 03:00 CEST (01:00 UTC), once.
    expect(occurrences(s, Date.parse("2024-03-30T12:00:00Z"), 2)).toEqual([
      "2024-03-31T01:00:00.000Z",
      "2024-04-01T00:30:00.000Z",
    ]);
    // 02:30 happens twice on 27 October 2024: it runs on the first (CEST), not again an hour later.
    expect(occurrences(s, Date.parse("2024-10-26T12:00:00Z"), 2)).toEqual([
      "2024-10-27T00:30:00.000Z",
      "2024-10-28T01:30:00.000Z",
    ]);
  });

  it("an hourly cron fires every real hour through the autumn change (no hour lost or doubled)", () => {
    const s: Schedule = { kind: "cron", expr: "0 * * * *", timezone: "Europe/Berlin" };
    expect(occurrences(s, Date.parse("2024-10-26T23:30:00Z"), 4)).toEqual([
      "2024-10-27T00:00:00.000Z",
      "2024-10-27T01:00:00.000Z",
      "2024-10-27T02:00:00.000Z",
      "2024-10-27T03:00:00.000Z",
    ]);
  });

  it("intervals stay on the grid of their anchor; one-shots fire once", () => {
    const every = parseSchedule("every 2h", utc);
    expect(occurrences(every, NOW, 2)).toEqual(["2024-06-03T12:00:00.000Z", "2024-06-03T14:00:00.000Z"]);
    expect(nextOccurrence(every, NOW + 3 * HOUR + 1)).toBe(NOW + 4 * HOUR);
    const once = parseSchedule("in 20m", utc);
    expect(occurrences(once, NOW, 3)).toEqual(["2024-06-03T10:20:00.000Z"]);
  });

  it("latestOccurrence finds the last due tick after downtime", () => {
    const every = parseSchedule("every 1h", utc);
    expect(latestOccurrence(every, NOW + HOUR, NOW + 10 * HOUR + 5 * MIN)).toBe(NOW + 10 * HOUR);
    const cron: Schedule = { kind: "cron", expr: "0 8 * * *", timezone: "UTC" };
    const first = Date.parse("2024-06-04T08:00:00Z");
    expect(latestOccurrence(cron, first, Date.parse("2024-06-09T09:00:00Z"))).toBe(
      Date.parse("2024-06-09T08:00:00Z"),
    );
    expect(latestOccurrence(cron, first, first)).toBe(first);
  });

  it("periodAt is the gap to the next occurrence", () => {
    expect(periodAt(parseSchedule("every 30m", utc), NOW)).toBe(30 * MIN);
    expect(
      periodAt({ kind: "cron", expr: "0 8 * * 1-5", timezone: "UTC" }, Date.parse("2024-06-07T08:00:00Z")),
    ).toBe(72 * HOUR);
    expect(periodAt(parseSchedule("in 5m", utc), NOW)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("missed runs and back-off", () => {
  it("auto runs a late tick within half its period, run always, skip only when on time", () => {
    expect(runsWhenLate("auto", 29 * MIN, HOUR)).toBe(true);
    expect(runsWhenLate("auto", 31 * MIN, HOUR)).toBe(false);
    expect(runsWhenLate("auto", 30 * 24 * HOUR, Number.POSITIVE_INFINITY)).toBe(true);
    expect(runsWhenLate("run", 10 * HOUR, HOUR)).toBe(true);
    expect(runsWhenLate("skip", 5_000, HOUR)).toBe(true);
    expect(runsWhenLate("skip", 5 * MIN, HOUR)).toBe(false);
  });

  it("a failing job skips 0, 1, 3, 7 … ticks, at most a day's worth", () => {
    expect([1, 2, 3, 4, 5].map((n) => skipTicksAfter(n, HOUR))).toEqual([0, 1, 3, 7, 15]);
    expect(skipTicksAfter(12, HOUR)).toBe(23);
    expect(skipTicksAfter(5, 24 * HOUR)).toBe(0);
  });
});

describe("targets", () => {
  it("normalises and validates target lists", () => {
    expect(
      parseTargets("origin, telegram ,slack:C1:1700.1, email:ops@example.com,local,origin", {
        hasOrigin: true,
      }),
    ).toEqual(["origin", "telegram", "slack:C1:1700.1", "email:ops@example.com", "local"]);
    expect(() => parseTargets("origin", { hasOrigin: false })).toThrow(/command line has none/);
    expect(() => parseTargets("email:not-an-address", { hasOrigin: true })).toThrow(/not an email address/);
    expect(() =>
      parseTargets("telegarm", { hasOrigin: true, knownPlatforms: new Set(["telegram"]) }),
    ).toThrow(/not a platform Herald knows/);
    expect(() => parseTargets(" , ", { hasOrigin: true })).toThrow(/No delivery target/);
  });

  it("resolves origin, home channels and chats; says why the rest are unreachable", () => {
    const origin = { platform: "telegram", chatId: "42" };
    const resolved = resolveTargets(
      ["origin", "telegram", "discord", "slack", "email:a@b.c", "local"],
      origin,
      {
        homeChannel: (p) => (p === "discord" ? { platform: "discord", chatId: "9" } : undefined),
        isRunning: (p) => p !== "slack",
      },
    );
    expect(resolved.chats.map((c) => [c.spec, c.chat])).toEqual([
      ["origin", origin],
      ["discord", { platform: "discord", chatId: "9" }],
      ["email:a@b.c", { platform: "email", chatId: "a@b.c" }],
    ]);
    expect(resolved.unreachable.map((u) => u.spec)).toEqual(["telegram", "slack"]);
    expect(resolved.unreachable[0]?.reason).toMatch(/no home channel.*\/sethome.*TELEGRAM_HOME_CHANNEL/);
  });
});
