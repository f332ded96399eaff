import type { KeyValueStore } from "../../../core/types.js";

/** A Map-backed KeyValueStore (the gateway's is SQLite). */
export function memoryKv(): KeyValueStore {
  const map = new Map<string, string>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}
