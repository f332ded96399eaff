/**
 * Resolution and the address check of one hop. The address returned here is the one the socket
 * connects to (see `pinnedLookup`), so a DNS answer that changes between the check and the connect
 * (DNS rebinding) cannot move the request to a private address.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { blockedReason } from "./address.js";
import { WebError } from "./errors.js";
import { type OwnListeners, ownListeners } from "./own-listeners.js";
import type { AllowPrivate, HostLookup, ResolvedAddress } from "./types.js";

/** node:dns `lookup` with `all: true`, in the resolver's order. */
export const systemLookup: HostLookup = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** The host of a URL without the brackets of an IPv6 literal. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

function isAllowed(allowPrivate: AllowPrivate, hostname: string, address: string): boolean {
  return typeof allowPrivate === "function" ? allowPrivate({ hostname, address }) : allowPrivate;
}

/** The port a URL connects to (its own, else the scheme's). */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/**
 * The refusal of a connection to Herald's own listener at `address`:`port`, or undefined. Whatever
 * `allowPrivate` says: the gateway's pages and API trust requests from its own machine.
 */
export function ownListenerRefusal(
  listeners: OwnListeners,
  hostname: string,
  address: string,
  port: number,
): string | undefined {
  const label = listeners.refusal(hostname, address, port);
  if (!label) return undefined;
  const where = hostname === address ? `${hostname}:${port}` : `${hostname}:${port} (${address})`;
  return `${where} is ${label}; web fetches never reach Herald's own listeners, whatever web.allow_private says`;
}

/**
 * Resolves the host of `url` and checks every address it resolves to. Rejects with a `WebError`:
 * `dns` when the name does not resolve, `blocked_address` when any address is Herald's own listener
 * (`listeners`, always refused) or is not public and `allowPrivate` does not allow it (a name with one
 * public and one private address is refused: the resolver, not us, would pick which one a later
 * connection gets). Resolves to the address to connect to.
 */
export async function resolveChecked(
  url: URL,
  allowPrivate: AllowPrivate,
  lookup: HostLookup,
  signal?: AbortSignal,
  listeners: OwnListeners = ownListeners,
): Promise<ResolvedAddress> {
  const hostname = bareHostname(url);
  const literal = isIP(hostname);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await lookup(hostname, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new WebError(
        "dns",
        url.href,
        `${hostname} does not resolve (${code ?? "no address"}); check the URL`,
        {
          cause: err,
          retryable: code === "EAI_AGAIN",
        },
      );
    }
  }
  const first = addresses[0];
  if (!first) throw new WebError("dns", url.href, `${hostname} resolved to no address; check the URL`);
  for (const { address } of addresses) {
    const own = ownListenerRefusal(listeners, hostname, address, portOf(url));
    if (own) throw new WebError("blocked_address", url.href, `refused ${url.href}: ${own}`);
    const reason = blockedReason(address);
    if (reason && !isAllowed(allowPrivate, hostname, address)) {
      const where = literal ? `${hostname} is` : `${hostname} resolves to ${address},`;
      throw new WebError(
        "blocked_address",
        url.href,
        `refused ${url.href}: ${where} a ${reason}${reason.endsWith(" address") ? "" : " address"}. Web tools fetch only public addresses; ` +
          "the owner can allow private ones with web.allow_private in config.yaml (HERALD_WEB_ALLOW_PRIVATE=true)",
      );
    }
  }
  return first;
}

/**
 * A `lookup` for an http(s).Agent that answers every name with `target`: the socket connects to the
 * address that was checked, whatever DNS would say now. Handles both callback forms (`all: true` is what
 * Node 20's happy-eyeballs connect asks for).
 */
export function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, [target]);
    } else callback(null, target.address, target.family);
  };
}
