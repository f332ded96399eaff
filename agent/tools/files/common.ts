/** Small helpers the file tools share. */
import { HeraldError } from "../../../core/errors.js";
import type { FileInfo } from "../../exec/index.js";
import type { FileScope } from "./types.js";

/** Bytes asked of the backend per read while streaming a file. */
const CHUNK_BYTES = 1024 * 1024;

/** How a workspace-relative path is shown to the model. */
export function displayPath(rel: string): string {
  return rel === "" ? "." : rel;
}

/** The file or folder at `rel`; "does not exist" as a HeraldError `not_found` that names it. */
export async function statPath(scope: FileScope, rel: string, hint = ""): Promise<FileInfo> {
  const info = await scope.files.stat(rel);
  if (!info) throw new HeraldError(`${displayPath(rel)} does not exist${hint}`, { code: "not_found" });
  return info;
}

/**
 * The file at `rel`, at most `maxBytes + 1` bytes of it (one more than allowed tells the caller it is
 * too large), however much the file grew since it was measured: a size checked with `stat` does not
 * bound what a later read of the same path returns.
 */
export async function readUpTo(
  scope: FileScope,
  rel: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of fileChunks(scope, rel, signal, maxBytes + 1)) {
    parts.push(chunk);
    total += chunk.byteLength;
  }
  return Buffer.concat(parts, total);
}

/** The file at `rel` as chunks, read until its end (or `maxBytes`); stops when `signal` fires. */
export async function* fileChunks(
  scope: FileScope,
  rel: string,
  signal?: AbortSignal,
  maxBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<Uint8Array> {
  let offset = 0;
  while (offset < maxBytes) {
    signal?.throwIfAborted();
    const length = Math.min(CHUNK_BYTES, maxBytes - offset);
    const chunk = await scope.files.read(rel, { offset, length });
    if (chunk.byteLength > 0) yield chunk;
    if (chunk.byteLength < length) return;
    offset += chunk.byteLength;
  }
}

/** `1234567` → `"1,234,567"`. */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** Cuts `text` to `maxChars`, saying how much was dropped. */
export function capOutput(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n… output cut: ${formatCount(text.length - maxChars)} more characters not shown`;
}
