/**
 * UTC without Intl: the prompt's date, the session reset boundary and the default zone say on a UTC
 * server exactly what Intl says, so skipping ICU there changes no text and no reset.
 */
import { afterEach, describe, expect, it } from "vitest";
import { describeNow } from "../../agent/prompt.js";
import { assertTimeZone, isUtcZone, systemTimeZone } from "../../core/time-zone.js";
import { lastDailyBoundary } from "../../sessions/reset-policy.js";

const HOUR = 3_600_000;
/** Instants over more than a year, at odd hours, a leap day included. */
const instants = Array.from({ length: 300 }, (_, i) => Date.UTC(2027, 11, 30) + i * 37 * HOUR + i * 61_000);

function intlNow(now: number, zone: string): string {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    weekday: "long",
    day: "numeric",
    month: "long",
    year: "numeric",
    hour: "2-digit",
    hourCycle: "h23",
  }).formatToParts(now);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const pad = (h: number) => `${String(h % 24).padStart(2, "0")}:00`;
  const hour = Number(get("hour"));
  return `It is ${get("weekday")}, ${get("day")} ${get("month")} ${get("year")}, between ${pad(hour)} and ${pad(hour + 1)} (${zone}).`;
}

const savedTz = process.env["TZ"];
afterEach(() => {
  if (savedTz === undefined) delete process.env["TZ"];
  else process.env["TZ"] = savedTz;
});

describe("time zones without Intl on UTC", () => {
  it("the prompt's date for UTC names is what Intl formats", () => {
    for (const zone of ["UTC", "Etc/UTC"])
      for (const now of instants) expect(describeNow(now, zone)).toBe(intlNow(now, zone));
    expect(describeNow(Date.UTC(2028, 1, 29, 23, 59), "UTC")).toBe(
      "It is Tuesday, 29 February 2028, between 23:00 and 00:00 (UTC).",
    );
  });

  it("the daily reset boundary on UTC is the one a zone at UTC+0 through Intl gives", () => {
    for (const now of instants)
      for (const atHour of [0, 4, 23])
        expect(lastDailyBoundary(now, atHour, "Etc/UTC")).toBe(
          lastDailyBoundary(now, atHour, "Africa/Abidjan"),
        );
  });

  it("names UTC in its spellings, and still refuses an unknown zone", () => {
    expect(["UTC", "etc/utc", "GMT", "Etc/GMT0", "Zulu"].every(isUtcZone)).toBe(true);
    expect(["Europe/London", "Africa/Abidjan", "UTC+1"].some(isUtcZone)).toBe(false);
    expect(() => assertTimeZone("Etc/UTC")).not.toThrow();
    expect(() => assertTimeZone("Mars/Olympus_Mons")).toThrow(RangeError);
  });

  it("reports the process's zone as Intl does", () => {
    process.env["TZ"] = "Etc/UTC";
    expect(systemTimeZone()).toBe("UTC");
    process.env["TZ"] = "Europe/Berlin";
    expect(systemTimeZone()).toBe("Europe/Berlin");
    expect(systemTimeZone()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });
});
