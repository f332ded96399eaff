/** Herald's version, from package.json (one folder up from app/, two from dist/app/). */
import { existsSync, readFileSync } from "node:fs";

/** Herald's version (package.json, from source or from dist/). */
export function heraldVersion(): string {
  const url = [
    new URL("../package.json", import.meta.url),
    new URL("../../package.json", import.meta.url),
  ].find((u) => existsSync(u));
  return url ? (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version : "0.0.0";
}
