/**
 * `createGuardedFetch`: a fetch-compatible function (any method, headers, body, a streamed response) for
 * code Herald hosts but does not control, such as plugins. Unlike `safeFetch` it does not resolve and
 * check up front: the check sits in the connection itself. Every socket its undici `Agent` opens, for the
 * first request and for each redirect hop, gets its address from a `lookup` that refuses non-public
 * addresses (agent/tools/web/address.ts), and an IP-literal host (which skips DNS) is checked before the socket is
 * opened. So the address checked is the address connected to, whatever DNS answers later.
 *
 * undici (a fifth of a second to load) is imported by the first request, not by the import of this file
 * nor by `createGuardedFetch`: a process whose plugins never fetch never loads it.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type {
  buildConnector,
  Dispatcher,
  Request as UndiciRequest,
  RequestInit as UndiciRequestInit,
} from "undici";
import { blockedReason } from "./address.js";
import { WebError } from "./errors.js";
import { type OwnListeners, ownListeners } from "./own-listeners.js";
import { ownListenerRefusal, systemLookup } from "./resolve.js";
import type { AllowPrivate, GuardedFetchOptions, HostLookup } from "./types.js";

type LookupCallback = Parameters<LookupFunction>[2];

/** A connection refused by the address check; `createGuardedFetch` turns it into a `WebError`. */
class RefusedConnection extends Error {
  constructor(
    readonly hostname: string,
    message: string,
  ) {
    super(message);
    this.name = "RefusedConnection";
  }
}

/** What a connection is checked against. */
interface Policy {
  allowPrivate: AllowPrivate;
  listeners: OwnListeners;
  hint: string;
}

/** Why connecting to `address`:`port` for `hostname` is refused, or undefined when it may go ahead. */
function refusal(
  hostname: string,
  address: string,
  port: number,
  policy: Policy,
): RefusedConnection | undefined {
  const { allowPrivate, hint } = policy;
  const own = ownListenerRefusal(policy.listeners, hostname, address, port);
  if (own) return new RefusedConnection(hostname, own);
  const reason = blockedReason(address);
  if (!reason) return undefined;
  const allowed =
    typeof allowPrivate === "function" ? allowPrivate({ hostname, address }) : allowPrivate === true;
  if (allowed) return undefined;
  const what = hostname === address ? `${hostname} is` : `${hostname} resolves to ${address},`;
  // "loopback (127.0.0.0/8), inside an IPv6 address" already ends with its noun.
  const noun = reason.endsWith(" address") ? "" : " address";
  return new RefusedConnection(hostname, `${what} a ${reason}${noun}; ${hint}`);
}

/**
 * A `net` lookup that resolves with `lookup` and refuses the whole name when any of its addresses is not
 * allowed (the connection may try them all: happy eyeballs). Answers both callback forms.
 */
function checkingLookup(lookup: HostLookup, port: number, policy: Policy): LookupFunction {
  return (hostname, options: LookupOptions, callback: LookupCallback) => {
    const { family: asked } = options;
    const family = asked === 4 || asked === "IPv4" ? 4 : asked === 6 || asked === "IPv6" ? 6 : 0;
    lookup(hostname).then(
      (found) => {
        const refused = found.map((a) => refusal(hostname, a.address, port, policy)).find(Boolean);
        const usable = family ? found.filter((a) => a.family === family) : found;
        const first = usable[0];
        process.nextTick(() => {
          if (refused) callback(refused, "", 0);
          else if (!first)
            callback(
              Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }),
              "",
              0,
            );
          else if (options.all) callback(null, usable as LookupAddress[]);
          else callback(null, first.address, first.family);
        });
      },
      (err: NodeJS.ErrnoException) => process.nextTick(() => callback(err, "", 0)),
    );
  };
}

type Undici = typeof import("undici");

/** undici's `Agent` whose every connection goes through the address check of `policy`. */
function guardedDispatcher(undici: Undici, lookup: HostLookup, policy: Policy): Dispatcher {
  // The lookup is told no port, and the check needs one: a connector per port (a handful at most).
  const connectors = new Map<number, buildConnector.connector>();
  const connectorFor = (port: number) => {
    let connector = connectors.get(port);
    if (!connector) {
      connector = undici.buildConnector({ lookup: checkingLookup(lookup, port, policy) });
      connectors.set(port, connector);
    }
    return connector;
  };
  return new undici.Agent({
    connect: (connect, callback) => {
      const port = connect.port ? Number(connect.port) : connect.protocol === "https:" ? 443 : 80;
      // An IP literal never reaches the lookup: Node connects to it directly.
      const host = connect.hostname.replace(/^\[|\]$/g, "");
      const refused = isIP(host) ? refusal(host, host, port, policy) : undefined;
      if (refused) callback(refused, null);
      else connectorFor(port)(connect, callback);
    },
  });
}

/** The refusal in an error's cause chain (undici wraps it in "TypeError: fetch failed"). */
function refusedIn(err: unknown): RefusedConnection | undefined {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof RefusedConnection) return e;
  }
  return undefined;
}

/**
 * undici's fetch reads only its own `Request` and `FormData` classes; the global ones (Node's bundled
 * undici) would be sent as "[object FormData]" or refused as a URL. Rebuild them as undici's.
 */
function adopt(
  undici: Undici,
  input: string | URL | Request,
  init: RequestInit | undefined,
): [string | URL | UndiciRequest, UndiciRequestInit] {
  const { Request: RequestClass, FormData: FormDataClass } = undici;
  let target: string | URL | UndiciRequest = input as string | URL;
  if (typeof input === "object" && !(input instanceof URL) && !(input instanceof RequestClass)) {
    target = new RequestClass(input.url, {
      method: input.method,
      headers: [...input.headers],
      body: input.body,
      redirect: input.redirect,
      signal: input.signal,
      ...(input.body ? { duplex: "half" as const } : {}),
    });
  }
  const adopted = { ...init } as UndiciRequestInit & { body?: unknown };
  const body = init?.body;
  if (body instanceof FormData && !(body instanceof FormDataClass)) {
    const form = new FormDataClass();
    for (const [name, value] of body) form.append(name, value);
    adopted.body = form;
  }
  return [target, adopted];
}

/**
 * A `fetch` whose connections reach only public addresses unless `options.allowPrivate` allows more,
 * and never Herald's own listeners (`options.ownListeners`).
 * Redirects are followed by fetch as usual; each hop's connection is checked the same way. A refused
 * request rejects with a `WebError` of reason `blocked_address` whose message names the URL asked for,
 * the host, its address, why it is refused and then `options.hint` (how to allow it); every other
 * failure rejects as fetch does (`TypeError: fetch failed` with a `cause`). Any `dispatcher` in `init`
 * is replaced by the guarded one. The response is undici's `Response` (the same API as the global one,
 * not the same class).
 */
export function createGuardedFetch(options: GuardedFetchOptions): typeof fetch {
  const policy: Policy = {
    allowPrivate: options.allowPrivate ?? false,
    listeners: options.ownListeners ?? ownListeners,
    hint: options.hint,
  };
  const lookup = options.lookup ?? systemLookup;
  let ready: Promise<{ undici: Undici; dispatcher: Dispatcher }> | undefined;
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    ready ??= import("undici").then((undici) => ({
      undici,
      dispatcher: guardedDispatcher(undici, lookup, policy),
    }));
    const { undici, dispatcher } = await ready;
    const [target, adopted] = adopt(undici, input, init);
    try {
      const response = await undici.fetch(target, { ...adopted, dispatcher });
      // undici's Response implements the global Response's API (the types differ only in name).
      return response as unknown as Response;
    } catch (err) {
      const refused = refusedIn(err);
      if (!refused) throw err;
      const url = typeof target === "string" ? target : target instanceof URL ? target.href : target.url;
      const asked = new URL(url).hostname.replace(/^\[|\]$/g, "");
      const where = asked === refused.hostname ? url : `${url} at a redirect`;
      throw new WebError("blocked_address", url, `refused ${where}: ${refused.message}`, { cause: err });
    }
  };
  return guarded as typeof fetch;
}
