/**
 * Who is talking in the web chat. The owner logs in with the dashboard's secret (DASHBOARD_PASSWORD or
 * API_SERVER_KEY) and is the user `owner`; anyone else joins through an invite link the owner made,
 * which makes them a user of their own (`u-…`) and admits them as a pairing approval would. A login is
 * a random id in an HttpOnly, SameSite=Strict cookie scoped to `/chat`, stored (hashed) in the
 * adapter's key-value namespace so it survives a restart, with a CSRF token every change must carry.
 * Without a secret the chat answers only on a loopback server to loopback requests, as the owner (the
 * dashboard's rule); the request guard also holds those requests to a loopback Host and own Origin.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { KeyValueStore } from "../../core/types.js";

/** The login cookie's name. */
export const COOKIE_NAME = "herald_chat";
/** The owner's user id (the password login). */
export const OWNER_ID = "owner";
/** Failed logins from one address within the window before further tries are refused. */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;
const LOOPBACK_ADDRESS = /^(127\.|::1$|::ffff:127\.)/;

/** A logged-in browser. */
export interface WebLogin {
  userId: string;
  /** Shown beside the user's messages and sent as the sender's name. */
  name: string;
  csrf: string;
  expiresAt: number;
  /** The cookie's id (absent in the login-less mode). */
  id?: string | undefined;
}

/** A request's standing. */
export type WebAuthState = { kind: "ok"; login: WebLogin } | { kind: "login" } | { kind: "refused" };

export interface WebAuthOptions {
  kv: KeyValueStore;
  secrets: readonly string[];
  loopbackServer: boolean;
  loginTtlMs: number;
  inviteTtlMs: number;
  /** Whether a user may still talk (a revoked pairing ends the invitee's logins). */
  isAllowed?: ((userId: string) => boolean) | undefined;
  now?: () => number;
}

/** Logins, invites and CSRF tokens. */
export class WebAuth {
  readonly #o: WebAuthOptions;
  readonly #secrets: Buffer[];
  readonly #failures = new Map<string, number[]>();
  readonly #openCsrf = token();
  readonly #now: () => number;

  constructor(options: WebAuthOptions) {
    this.#o = options;
    this.#secrets = options.secrets.filter(Boolean).map(digest);
    this.#now = options.now ?? Date.now;
  }

  /** Whether the owner logs in with a password (else: loopback only, no login). */
  get loginRequired(): boolean {
    return this.#secrets.length > 0;
  }

  /** The standing of `req`: its login, a login page, or refused (login-less mode off loopback). */
  check(req: IncomingMessage): WebAuthState {
    const id = cookieValue(req.headers.cookie, COOKIE_NAME);
    const stored = id ? this.#read(id) : undefined;
    if (stored) return { kind: "ok", login: stored };
    if (this.loginRequired) return { kind: "login" };
    const local = this.#o.loopbackServer && LOOPBACK_ADDRESS.test(req.socket.remoteAddress ?? "");
    if (!local) return { kind: "refused" };
    return {
      kind: "ok",
      login: { userId: OWNER_ID, name: OWNER_ID, csrf: this.#openCsrf, expiresAt: Number.MAX_SAFE_INTEGER },
    };
  }

  /** Checks the owner's password from `remote`: a new login's Set-Cookie, or why not. */
  login(
    password: string,
    remote: string,
    secure: boolean,
  ): { cookie: string } | { error: string; status: number } {
    const now = this.#now();
    const recent = (this.#failures.get(remote) ?? []).filter((t) => t > now - FAILURE_WINDOW_MS);
    if (recent.length >= MAX_FAILURES)
      return { error: "Too many failed logins from this address; wait 15 minutes.", status: 429 };
    const given = digest(password);
    if (!this.#secrets.some((s) => timingSafeEqual(s, given))) {
      recent.push(now);
      this.#failures.set(remote, recent);
      return { error: "Wrong password.", status: 401 };
    }
    this.#failures.delete(remote);
    return { cookie: this.#start(OWNER_ID, OWNER_ID, secure) };
  }

  /** A new invite link's token for a person called `name` (only the token's hash is stored). */
  invite(name: string): { token: string; expiresAt: number } {
    const t = token();
    const expiresAt = this.#now() + this.#o.inviteTtlMs;
    this.#o.kv.set(`invite:${hash(t)}`, JSON.stringify({ name, expiresAt }));
    return { token: t, expiresAt };
  }

  /** Whether an invite token is valid now (without using it). */
  inviteValid(t: string): boolean {
    return this.#invite(t) !== undefined;
  }

  /**
   * Uses an invite: a new user (admitted by `admit`) and its login's Set-Cookie; undefined for an
   * unknown, used or expired token. Each link makes one user.
   */
  redeem(t: string, secure: boolean, admit: (userId: string) => void): { cookie: string } | undefined {
    const invite = this.#invite(t);
    if (!invite) return undefined;
    this.#o.kv.delete(`invite:${hash(t)}`);
    const userId = `u-${randomBytes(6).toString("hex")}`;
    admit(userId);
    return { cookie: this.#start(userId, invite.name || userId, secure) };
  }

  /** Ends `login`; the Set-Cookie value that clears the cookie. */
  logout(login: WebLogin): string {
    if (login.id) this.#o.kv.delete(`login:${hash(login.id)}`);
    return `${COOKIE_NAME}=; Path=/chat; HttpOnly; SameSite=Strict; Max-Age=0`;
  }

  /** Whether `given` is `login`'s CSRF token (constant time). */
  csrfValid(login: WebLogin, given: string | undefined): boolean {
    if (!given) return false;
    return timingSafeEqual(digest(login.csrf), digest(given));
  }

  #start(userId: string, name: string, secure: boolean): string {
    const id = token();
    const login: WebLogin = { userId, name, csrf: token(), expiresAt: this.#now() + this.#o.loginTtlMs };
    this.#o.kv.set(`login:${hash(id)}`, JSON.stringify(login));
    const maxAge = Math.floor(this.#o.loginTtlMs / 1000);
    return `${COOKIE_NAME}=${id}; Path=/chat; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
  }

  #read(id: string): WebLogin | undefined {
    const key = `login:${hash(id)}`;
    const raw = this.#o.kv.get(key);
    if (!raw) return undefined;
    const login = JSON.parse(raw) as WebLogin;
    const allowed = this.#o.isAllowed?.(login.userId) ?? true;
    if (login.expiresAt <= this.#now() || !allowed) {
      this.#o.kv.delete(key);
      return undefined;
    }
    return { ...login, id };
  }

  #invite(t: string): { name: string; expiresAt: number } | undefined {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(t)) return undefined;
    const raw = this.#o.kv.get(`invite:${hash(t)}`);
    const invite = raw ? (JSON.parse(raw) as { name: string; expiresAt: number }) : undefined;
    return invite && invite.expiresAt > this.#now() ? invite : undefined;
  }
}

function token(): string {
  return randomBytes(32).toString("base64url");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function hash(text: string): string {
  return digest(text).toString("base64url");
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether the request came over TLS (directly, or as a proxy in front says). */
export function isSecure(req: IncomingMessage): boolean {
  const proto = req.headers["x-forwarded-proto"];
  return (req.socket as { encrypted?: boolean }).encrypted === true || proto === "https";
}
