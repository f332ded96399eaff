/**
 * WeCom's callback cryptography: `msg_signature` = hex SHA-1 of the sorted token, timestamp, nonce and
 * ciphertext joined; AES-256-CBC with the key = base64 of the 43-character EncodingAESKey plus "=", the
 * IV = its first 16 bytes, PKCS#7 padding to 32-byte blocks, over random(16) + length(4, big-endian) +
 * message + receiver id (the Corp ID).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** The 32-byte AES key of an EncodingAESKey. */
export const aesKeyOf = (encodingAesKey: string): Buffer => Buffer.from(`${encodingAesKey}=`, "base64");

/** WeCom's signature over a request's parts. */
export function wecomSignature(token: string, timestamp: string, nonce: string, encrypted: string): string {
  return createHash("sha1").update([token, timestamp, nonce, encrypted].sort().join("")).digest("hex");
}

/** Whether `signature` is the one for these parts (constant time). */
export function signatureMatches(signature: string, expected: string): boolean {
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Encrypts `message` for `receiverId` (base64). */
export function wecomEncrypt(message: string, receiverId: string, encodingAesKey: string): string {
  const key = aesKeyOf(encodingAesKey);
  const body = Buffer.from(message, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  const plain = Buffer.concat([randomBytes(16), length, body, Buffer.from(receiverId, "utf8")]);
  const pad = 32 - (plain.length % 32);
  const cipher = createCipheriv("aes-256-cbc", key, key.subarray(0, 16)).setAutoPadding(false);
  return Buffer.concat([
    cipher.update(Buffer.concat([plain, Buffer.alloc(pad, pad)])),
    cipher.final(),
  ]).toString("base64");
}

/**
 * Decrypts a ciphertext; the message and the receiver id it names.
 * @throws Error when it does not decrypt or its padding or length is wrong
 */
export function wecomDecrypt(
  encrypted: string,
  encodingAesKey: string,
): { message: string; receiverId: string } {
  const key = aesKeyOf(encodingAesKey);
  const decipher = createDecipheriv("aes-256-cbc", key, key.subarray(0, 16)).setAutoPadding(false);
  const plain = Buffer.concat([decipher.update(Buffer.from(encrypted, "base64")), decipher.final()]);
  const pad = plain[plain.length - 1] ?? 0;
  if (pad < 1 || pad > 32 || plain.length < 20 + pad) throw new Error("bad padding");
  const unpadded = plain.subarray(0, plain.length - pad);
  const length = unpadded.readUInt32BE(16);
  if (20 + length > unpadded.length) throw new Error("bad length");
  return {
    message: unpadded.subarray(20, 20 + length).toString("utf8"),
    receiverId: unpadded.subarray(20 + length).toString("utf8"),
  };
}
