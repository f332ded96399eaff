/** Small helpers the file tools share. */
import type { Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import { relative, sep } from "node:path";
import { HeraldError } from "../../core/errors.js";
import type { FileScope } from "./types.js";

/** How a path is shown to the model: relative to the workspace when inside it, absolute otherwise. */
export function displayPath(scope: FileScope, abs: string): string {
  const rel = relative(scope.root, abs);
  if (rel === "") return ".";
  if (rel.startsWith("..") || rel.startsWith(sep)) return abs;
  return rel.split(sep).join("/");
}

/** `stat`, with "does not exist" as a HeraldError `not_found` that names the path. */
export async function statPath(abs: string, shown: string, hint = ""): Promise<Stats> {
  try {
    return await stat(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      throw new HeraldError(`${shown} does not exist${hint}`, { code: "not_found", cause: err });
    throw new HeraldError(`${shown} cannot be read: ${(err as Error).message}`, {
      code: "tool_error",
      cause: err,
    });
  }
}

/**
 * A file's bytes, at most `maxBytes + 1` of them (one more than allowed tells the caller it is too
 * large), however much the file grew since it was measured: a size checked with `stat` does not bound
 * what a later read of the same path returns.
 */
export async function readUpTo(abs: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const handle = await open(abs, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total <= maxBytes) {
      signal?.throwIfAborted();
      const want = Math.min(1024 * 1024, maxBytes + 1 - total);
      const buffer = Buffer.allocUnsafe(want);
      const { bytesRead } = await handle.read(buffer, 0, want, null);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
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
