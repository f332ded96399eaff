/** Small helpers the file tools share. */
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
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

/** `1234567` → `"1,234,567"`. */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** Cuts `text` to `maxChars`, saying how much was dropped. */
export function capOutput(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n… output cut: ${formatCount(text.length - maxChars)} more characters not shown`;
}
