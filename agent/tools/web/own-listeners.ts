/**
 * The addresses and ports Herald itself answers on (its HTTP server: the API, the dashboard, webhooks,
 * the state API, `/mcp`; for a worker, the gateway it reports to). An agent's fetch never reaches them,
 * whatever `allow_private` says: the agent would read the dashboard's transcripts or call the API with
 * the rights of the server's own machine. Checked by address and port after DNS resolution, at every
 * redirect hop, by `safeFetch` and `createGuardedFetch`.
 */
import { networkInterfaces } from "node:os";
import { isLoopbackAddress, parseIpv6 } from "./address.js";

/** One listener: `address` as bound (`0.0.0.0` and `::` mean every address of the machine). */
export interface OwnListener {
  address: string;
  port: number;
  /** What answers there, for the refusal's message, e.g. "Herald's own HTTP server (the API, …)". */
  label: string;
  /** A host name the listener is known by (a worker's HERALD_GATEWAY_URL), matched besides the address. */
  hostname?: string | undefined;
}

/** `::ffff:a.b.c.d` as `a.b.c.d`; other addresses as given, lowercased and without brackets or zone. */
function normalize(address: string): string {
  const bare = address
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "")
    .toLowerCase();
  if (!bare.includes(":")) return bare;
  const bytes = parseIpv6(bare);
  if (!bytes) return bare;
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return bytes.slice(12).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(":");
}

/** The machine's interface addresses, normalized; read again after a second (interfaces come and go). */
let interfaces: { addresses: Set<string>; readAt: number } | undefined;
function interfaceAddresses(): Set<string> {
  const now = Date.now();
  if (!interfaces || now - interfaces.readAt > 1_000) {
    const addresses = new Set<string>();
    for (const list of Object.values(networkInterfaces()))
      for (const info of list ?? []) addresses.add(normalize(info.address));
    interfaces = { addresses, readAt: now };
  }
  return interfaces.addresses;
}

/** Whether a connection to `address` stays on this machine: loopback, unspecified, or an interface's. */
function isLocal(address: string): boolean {
  const a = normalize(address);
  if (isLoopbackAddress(a) || a === "0.0.0.0" || a === "0:0:0:0:0:0:0:0") return true;
  return interfaceAddresses().has(a);
}

/** The listeners of this process; `refusal` says whether a connection would reach one. */
export class OwnListeners {
  readonly #listeners = new Set<OwnListener>();

  /** Registers a listener; returns the function that removes it (idempotent). */
  add(listener: OwnListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * The label of the listener a connection to `address`:`port` (reached as `hostname`) would reach, or
   * undefined when it reaches none of them. A listener on a local address (loopback, unspecified, an
   * interface's) is reached by every local address on its port: 127.0.0.2, [::1] and the machine's LAN
   * address all reach a server bound to 0.0.0.0. Pure; never throws.
   */
  refusal(hostname: string, address: string, port: number): string | undefined {
    if (this.#listeners.size === 0) return undefined;
    const target = normalize(address);
    const name = hostname.replace(/\.$/, "").toLowerCase();
    for (const l of this.#listeners) {
      if (l.port !== port) continue;
      const same =
        normalize(l.address) === target ||
        (l.hostname !== undefined && l.hostname.toLowerCase() === name) ||
        (isLocal(l.address) && isLocal(target));
      if (same) return l.label;
    }
    return undefined;
  }
}

/**
 * The process's listeners: the gateway's HTTP server adds itself when it listens and removes itself when
 * it closes; every fetch checks it unless given another.
 */
export const ownListeners = new OwnListeners();
