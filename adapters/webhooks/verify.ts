/** Checks a delivery's credentials: HMAC-SHA256 (with an optional signed timestamp) or a bearer token. */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { ResolvedWebhook } from "./types.js";

/** Why a delivery was refused (logged; the body never is). */
export type VerifyFailure =
  | "missing_signature"
  | "bad_signature"
  | "missing_timestamp"
  | "stale_timestamp"
  | "bad_token";

/** Reads one header as a string (the first, when repeated). */
export type HeaderReader = (name: string) => string | undefined;

function sameSecret(given: string, expected: string): boolean {
  // Digests of both: equal lengths for timingSafeEqual, and no early exit on the length.
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The hex HMAC-SHA256 a sender puts in the signature header (`timestamp` when the route signs one). */
export function signatureOf(secret: string, body: Buffer, timestamp?: string): string {
  const mac = createHmac("sha256", secret);
  if (timestamp !== undefined) mac.update(`${timestamp}.`);
  return mac.update(body).digest("hex");
}

/** Verifies a delivery; undefined when it passes. `nowMs` for the timestamp window. */
export function verifyDelivery(
  route: ResolvedWebhook,
  header: HeaderReader,
  body: Buffer,
  nowMs: number,
): VerifyFailure | undefined {
  const auth = route.auth;
  if (auth.type === "bearer") {
    const given = /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1]?.trim();
    return given && sameSecret(given, route.secret) ? undefined : "bad_token";
  }
  const raw = header(auth.header)?.trim();
  if (!raw) return "missing_signature";
  let timestamp: string | undefined;
  if (auth.timestampHeader) {
    timestamp = header(auth.timestampHeader)?.trim();
    if (!timestamp || !/^\d{1,13}$/.test(timestamp)) return "missing_timestamp";
  }
  const given = raw.replace(/^sha256=/i, "").toLowerCase();
  if (!sameSecret(given, signatureOf(route.secret, body, timestamp))) return "bad_signature";
  // Checked after the signature, so an unsigned request learns nothing about the window.
  if (timestamp !== undefined && Math.abs(nowMs - Number(timestamp) * 1000) > auth.toleranceS * 1000)
    return "stale_timestamp";
  return undefined;
}
