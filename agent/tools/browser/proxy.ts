/**
 * The browser's forward proxy: every request a page makes (navigations, redirects, subresources,
 * WebSockets, service workers; HTTP as absolute-URI requests, HTTPS and WebSockets as CONNECT tunnels)
 * reaches the network only through here. Each request's host is resolved here, every address it
 * resolves to is checked with the web tools' rules (public unicast only unless allowed; Herald's own
 * listeners never), and the connection goes to the address that was checked, so a DNS answer that
 * changes afterwards (rebinding) cannot move it. Chromium resolves nothing itself: with a proxy it
 * hands the proxy the host name.
 *
 * Two listeners: `pagesUrl`, where the session contexts' requests come (checked), and `closedUrl`, the
 * browser-wide proxy, where only Chromium's own background traffic arrives (refused whole).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { type AddressInfo, connect, isIP, type Socket } from "node:net";
import type { Logger } from "../../../core/logger.js";
import { blockedReason } from "../web/address.js";
import { type OwnListeners, ownListeners } from "../web/own-listeners.js";
import { systemLookup } from "../web/resolve.js";
import type { HostLookup, ResolvedAddress } from "../web/types.js";

/** Whether a private address may be reached: asked per host as asked, address and port. Must not throw. */
export type PrivateAllow = (target: { hostname: string; address: string; port: number }) => boolean;

/** Options of `startBrowserProxy`. */
export interface BrowserProxyOptions {
  /** Which private addresses pages may reach. @defaultValue none */
  allowPrivate?: PrivateAllow | undefined;
  /** Herald's own listeners, always refused (the proxy adds itself). @defaultValue the process's */
  listeners?: OwnListeners | undefined;
  /** @defaultValue node:dns lookup */
  lookup?: HostLookup | undefined;
  logger: Logger;
  /** Connecting upstream may take this long. @defaultValue 15_000 */
  connectTimeoutMs?: number | undefined;
}

/** One refused request, for the tools to explain a failed navigation. */
export interface Refusal {
  host: string;
  port: number;
  reason: string;
  at: number;
}

/** The running proxy. */
export interface BrowserProxy {
  /** `http://127.0.0.1:<port>`: the session contexts' proxy. */
  readonly pagesUrl: string;
  /** `http://127.0.0.1:<port>`: the browser-wide proxy, which refuses everything. */
  readonly closedUrl: string;
  /** The latest refusals (at most 50), newest last. */
  refusals(): readonly Refusal[];
  /** Requests the pages' listener let through, in order (host:port), the latest 200 (tests, bench). */
  passed(): readonly string[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** The request's headers without hop-by-hop ones, as raw pairs (keeps case and repeats). */
function forwardHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? "";
    if (!HOP_BY_HOP.has(name.toLowerCase())) out.push(name, raw[i + 1] ?? "");
  }
  return out;
}

class Refused extends Error {}

/** Resolves and checks one request's host; see the module comment. */
class Checker {
  readonly refused: Refusal[] = [];
  readonly passed: string[] = [];
  constructor(
    private readonly listeners: OwnListeners,
    private readonly lookup: HostLookup,
    private readonly allow: PrivateAllow,
    private readonly log: Logger,
  ) {}

  #refuse(host: string, port: number, reason: string): Refused {
    this.refused.push({ host, port, reason, at: Date.now() });
    if (this.refused.length > 50) this.refused.shift();
    this.log.info({ host, port, reason }, "browser request refused");
    return new Refused(`refused ${host}:${port}: ${reason}`);
  }

  /** The checked address to connect to for `host`:`port`. @throws Refused */
  async check(host: string, port: number): Promise<ResolvedAddress> {
    const hostname = host.replace(/^\[|\]$/g, "");
    const literal = isIP(hostname);
    let found: ResolvedAddress[];
    if (literal) found = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
    else {
      try {
        found = await this.lookup(hostname);
      } catch {
        throw this.#refuse(hostname, port, `${hostname} does not resolve`);
      }
    }
    for (const { address } of found) {
      const own = this.listeners.refusal(hostname, address, port);
      if (own) throw this.#refuse(hostname, port, `it is ${own}; pages never reach Herald's own listeners`);
      const reason = blockedReason(address);
      if (reason && !this.allow({ hostname, address, port }))
        throw this.#refuse(
          hostname,
          port,
          `${hostname === address ? "it is" : `it resolves to ${address},`} a ${reason} address; ` +
            "pages reach only public addresses unless browser.allow_private_hosts lists the host",
        );
    }
    const first = found[0];
    if (!first) throw this.#refuse(hostname, port, `${hostname} resolved to no address`);
    this.passed.push(`${hostname}:${port}`);
    if (this.passed.length > 200) this.passed.shift();
    return first;
  }
}

/** An absolute-URI HTTP request: checked, then sent to the checked address and piped back. */
async function forward(checker: Checker, req: IncomingMessage, res: ServerResponse, timeoutMs: number) {
  let url: URL;
  try {
    url = new URL(req.url ?? "");
    if (url.protocol !== "http:") throw new Error("not http");
  } catch {
    res.writeHead(400, { "content-type": "text/plain" }).end("this proxy takes absolute http:// URLs");
    return;
  }
  const port = url.port ? Number(url.port) : 80;
  let target: ResolvedAddress;
  try {
    target = await checker.check(url.hostname, port);
  } catch (err) {
    res
      .writeHead(403, { "content-type": "text/plain; charset=utf-8", "x-herald-refused": "1" })
      .end(`Herald refused this request: ${(err as Error).message}`);
    return;
  }
  const upstream = httpRequest({
    host: target.address,
    family: target.family,
    port,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers: forwardHeaders(req.rawHeaders),
    setHost: false,
    timeout: timeoutMs,
  });
  upstream.on("response", (up) => {
    res.writeHead(up.statusCode ?? 502, up.statusMessage, forwardHeaders(up.rawHeaders));
    up.pipe(res);
  });
  upstream.on("timeout", () => upstream.destroy(new Error("upstream timed out")));
  upstream.on("error", (err) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(err.message);
    else res.destroy();
  });
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
}

/** A CONNECT tunnel (HTTPS, WebSockets): checked, then joined to a socket to the checked address. */
async function tunnel(
  checker: Checker,
  req: IncomingMessage,
  client: Socket,
  head: Buffer,
  options: { timeoutMs: number; track(socket: Socket): void },
) {
  options.track(client);
  client.on("error", () => client.destroy());
  let host: string;
  let port: number;
  try {
    const url = new URL(`https://${req.url ?? ""}`);
    host = url.hostname;
    port = url.port ? Number(url.port) : 443;
  } catch {
    client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    return;
  }
  let target: ResolvedAddress;
  try {
    target = await checker.check(host, port);
  } catch (err) {
    client.end(`HTTP/1.1 403 Forbidden\r\nx-herald-refused: 1\r\n\r\n${(err as Error).message}`);
    return;
  }
  const upstream = connect({ host: target.address, port, family: target.family, timeout: options.timeoutMs });
  options.track(upstream);
  upstream.once("connect", () => {
    upstream.setTimeout(0);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on("timeout", () => upstream.destroy(new Error("timed out")));
  upstream.on("error", () => {
    if (client.writable && upstream.connecting) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    else client.destroy();
  });
  client.on("close", () => upstream.destroy());
}

/**
 * Answers a CONNECT or Upgrade request with `status` and closes. Node hands such a socket over without
 * the server's error listener: a browser that resets it after the answer (as Chromium does) would
 * otherwise throw "read ECONNRESET" out of the process.
 */
function refuse(socket: Socket, status: string): void {
  socket.on("error", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status}\r\n\r\n`);
}

function listen(server: Server): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

function stop(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Starts the proxy on two loopback ports and registers both among Herald's own listeners. */
export async function startBrowserProxy(options: BrowserProxyOptions): Promise<BrowserProxy> {
  const listeners = options.listeners ?? ownListeners;
  const log = options.logger.child({ component: "browser-proxy" });
  const checker = new Checker(
    listeners,
    options.lookup ?? systemLookup,
    options.allowPrivate ?? (() => false),
    log,
  );
  const timeoutMs = options.connectTimeoutMs ?? 15_000;
  // Tunnels leave the HTTP server once CONNECT is answered: closed by hand at the end.
  const tunnels = new Set<Socket>();
  const track = (socket: Socket) => {
    tunnels.add(socket);
    socket.once("close", () => tunnels.delete(socket));
  };
  const pages = createServer((req, res) => void forward(checker, req, res, timeoutMs));
  pages.on(
    "connect",
    (req, socket, head) => void tunnel(checker, req, socket as Socket, head, { timeoutMs, track }),
  );
  // An absolute-URI request with Upgrade: Chromium tunnels WebSockets with CONNECT instead.
  pages.on("upgrade", (_req, socket) => refuse(socket as Socket, "501 Not Implemented"));
  const closed = createServer((req, res) => {
    log.debug({ url: req.url }, "the browser's own request refused");
    res.writeHead(403).end();
  });
  closed.on("connect", (_req, socket) => refuse(socket as Socket, "403 Forbidden"));
  closed.on("upgrade", (_req, socket) => refuse(socket as Socket, "403 Forbidden"));
  const pagesPort = await listen(pages);
  const closedPort = await listen(closed);
  const label = "Herald's browser proxy";
  const removes = [
    listeners.add({ address: "127.0.0.1", port: pagesPort, label }),
    listeners.add({ address: "127.0.0.1", port: closedPort, label }),
  ];
  return {
    pagesUrl: `http://127.0.0.1:${pagesPort}`,
    closedUrl: `http://127.0.0.1:${closedPort}`,
    refusals: () => checker.refused,
    passed: () => checker.passed,
    async close() {
      for (const remove of removes) remove();
      for (const socket of tunnels) socket.destroy();
      await Promise.all([stop(pages), stop(closed)]);
    },
  };
}

/**
 * Whether `browser.allow_private_hosts` (or `web.allow_private`) lets a page reach a private address:
 * an entry `host` matches the host as asked or the address on any port, `host:port` on that port.
 */
export function privateAllow(entries: readonly string[], all: boolean): PrivateAllow {
  const parsed = entries.map((entry) => {
    const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(entry.trim().toLowerCase());
    return { host: m?.[1] ?? entry, port: m?.[2] ? Number(m[2]) : undefined };
  });
  return ({ hostname, address, port }) =>
    all ||
    parsed.some(
      (e) =>
        (e.host === hostname.toLowerCase() || e.host === address) &&
        (e.port === undefined || e.port === port),
    );
}
