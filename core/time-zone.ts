/**
 * Time zones, without `Intl` where the zone is UTC. Building any `Intl.DateTimeFormat` maps ICU's date
 * and zone data into the process (~8 MiB of resident pages that stay for its life); a server on UTC,
 * as most VPSs and containers are, need not pay that for the date in the prompt or the session reset
 * hour. Other zones go through `Intl`, which alone knows their rules.
 */
import { readlinkSync } from "node:fs";

const UTC_NAMES = new Set(
  ["UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu"].flatMap((n) => [
    n.toLowerCase(),
    `etc/${n.toLowerCase()}`,
  ]),
);

/** Whether `zone` names UTC (`UTC`, `Etc/UTC`, `GMT`, `Zulu` …; case as IANA links accept it). */
export function isUtcZone(zone: string): boolean {
  return UTC_NAMES.has(zone.toLowerCase());
}

/**
 * The process's IANA zone, as `Intl` reports it: "UTC" when `TZ` or `/etc/localtime` names UTC
 * (read without `Intl`), else `Intl`'s answer.
 */
export function systemTimeZone(): string {
  const tz = process.env["TZ"];
  const named = tz !== undefined ? tz.replace(/^:/, "") : localtimeZone();
  return named !== undefined && isUtcZone(named) ? "UTC" : Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** The zone `/etc/localtime` links to (`…/zoneinfo/Europe/Berlin` → `Europe/Berlin`), if it is a link. */
function localtimeZone(): string | undefined {
  try {
    return /\/zoneinfo\/(.+)$/.exec(readlinkSync("/etc/localtime"))?.[1];
  } catch {
    return undefined;
  }
}

/** Throws a RangeError unless `zone` is a time zone this runtime knows. */
export function assertTimeZone(zone: string): void {
  if (!isUtcZone(zone)) new Intl.DateTimeFormat("en-US", { timeZone: zone });
}
