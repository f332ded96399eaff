/**
 * Feishu's event subscription over HTTP, checked before anything is read: the body's signature
 * (`X-Lark-Signature` = hex SHA-256 of timestamp + nonce + Encrypt Key + raw body), its age, the
 * decryption of `{ encrypt }` (AES-256-CBC, key = SHA-256 of the Encrypt Key, IV = the first 16 bytes
 * of the ciphertext) and the Verification Token inside. Pure functions over the request's parts.
 */
import { createDecipheriv, createHash, timingSafeEqual } from "node:crypto";
import { envelopeSchema, type FeishuEnvelope } from "./types.js";

/** Why a request was refused: the HTTP status to answer and a reason for the log (no secrets). */
export class RefusedRequest extends Error {
  constructor(
    readonly status: number,
    reason: string,
  ) {
    super(reason);
    this.name = "RefusedRequest";
  }
}

/** The signature Feishu puts in `X-Lark-Signature`. */
export function feishuSignature(timestamp: string, nonce: string, encryptKey: string, body: string): string {
  return createHash("sha256")
    .update(timestamp + nonce + encryptKey + body)
    .digest("hex");
}

/** Decrypts an `encrypt` field. @throws RefusedRequest (400) when it does not decrypt */
export function decryptFeishu(encrypt: string, encryptKey: string): string {
  try {
    const bytes = Buffer.from(encrypt, "base64");
    const key = createHash("sha256").update(encryptKey).digest();
    const decipher = createDecipheriv("aes-256-cbc", key, bytes.subarray(0, 16));
    return Buffer.concat([decipher.update(bytes.subarray(16)), decipher.final()]).toString("utf8");
  } catch {
    throw new RefusedRequest(400, "the encrypted body does not decrypt with FEISHU_ENCRYPT_KEY");
  }
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** What verification needs. */
export interface VerifyOptions {
  encryptKey: string;
  verificationToken: string;
  maxSkewMs: number;
  now: number;
}

/**
 * The envelope of a request, verified. A `url_verification` (answered with its challenge) needs the
 * token only: Feishu sends it unsigned when the URL is saved.
 * @throws RefusedRequest with the status to answer
 */
export function verifyFeishu(headers: Headers, body: string, options: VerifyOptions): FeishuEnvelope {
  let outer: unknown;
  try {
    outer = JSON.parse(body);
  } catch {
    throw new RefusedRequest(400, "the body is not JSON");
  }
  const encrypted = (outer as { encrypt?: unknown } | null)?.encrypt;
  if (typeof encrypted !== "string")
    throw new RefusedRequest(400, "the body is not encrypted (set an Encrypt Key)");
  const parsed = envelopeSchema.safeParse(safeJson(decryptFeishu(encrypted, options.encryptKey)));
  if (!parsed.success) throw new RefusedRequest(400, "the decrypted event has no known shape");
  const envelope = parsed.data;
  const token = envelope.header?.token ?? envelope.token ?? "";
  if (!same(token, options.verificationToken)) {
    throw new RefusedRequest(401, "the event's token is not FEISHU_VERIFICATION_TOKEN");
  }
  if (envelope.type === "url_verification") return envelope;
  const timestamp = headers.get("x-lark-request-timestamp") ?? "";
  const nonce = headers.get("x-lark-request-nonce") ?? "";
  const signature = headers.get("x-lark-signature") ?? "";
  if (!signature || !same(signature, feishuSignature(timestamp, nonce, options.encryptKey, body))) {
    throw new RefusedRequest(401, "the X-Lark-Signature does not match the body");
  }
  if (Math.abs(options.now - Number(timestamp) * 1000) > options.maxSkewMs) {
    throw new RefusedRequest(401, "the request's timestamp is too old");
  }
  return envelope;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
