/**
 * A button's data as a platform's callback field holds it (Telegram's `callback_data`: 64 bytes,
 * Discord's `custom_id`: 100 characters, Slack's `value`: 2,000): itself when it fits, else a short id
 * whose data is kept in the adapter's key-value store, so a click after a restart still resolves.
 */
import { createHash } from "node:crypto";
import type { KeyValueStore } from "../../core/types.js";

/** Prefix of a callback value that names data kept in the key-value store. */
const STORED = "#b:";

/** `data` as a callback value of at most `maxBytes` UTF-8 bytes (at least 28). */
export function encodeButtonData(data: string, kv: KeyValueStore, maxBytes: number): string {
  if (Buffer.byteLength(data) <= maxBytes && !data.startsWith(STORED)) return data;
  const id = createHash("sha256").update(data).digest("base64url").slice(0, 24);
  kv.set(`button:${id}`, data);
  return `${STORED}${id}`;
}

/** The data a callback value stands for; undefined for a stored id this store no longer knows. */
export function decodeButtonData(value: string, kv: KeyValueStore): string | undefined {
  return value.startsWith(STORED) ? kv.get(`button:${value.slice(STORED.length)}`) : value;
}
