/** A made-up DNS for the SSRF guard's tests: names resolve to the addresses a test chooses. */
import type { HostLookup } from "../../../agent/tools/web/index.js";

/** A resolver that answers made-up names from `table` and records its calls; others are ENOTFOUND. */
export function fakeLookup(table: Record<string, string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({
      address,
      family: address.includes(":") ? (6 as const) : (4 as const),
    }));
  };
  return Object.assign(lookup, { calls });
}
