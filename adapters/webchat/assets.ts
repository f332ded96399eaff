/**
 * The page's static files: `client/` as written (plain ES modules and one stylesheet; no build step)
 * and `marked`'s browser build from node_modules. They are read once, gzipped once, and served under
 * `/chat/assets/<version>/`, where the version is a hash of all of them, so they are cached for a year
 * (`immutable`) and a new build is a new URL.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** One served file. */
export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

export interface WebAssets {
  /** The URL path prefix of this build's files, ending in `/`. */
  base: string;
  files: ReadonlyMap<string, Asset>;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

/** Where `client/` is: beside this file from source, in the package's sources from `dist/`. */
function clientDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, "client"), join(here, "..", "..", "..", "adapters", "webchat", "client")];
  const found = candidates.find((d) => existsSync(join(d, "app.js")));
  if (!found) throw new Error(`The web chat's page files are missing (looked in ${candidates.join(", ")}).`);
  return found;
}

let loaded: WebAssets | undefined;

/** The page's files (read on first use). @throws when the package lacks them */
export function webAssets(): WebAssets {
  if (loaded) return loaded;
  const dir = clientDir();
  const raw = new Map<string, Buffer>();
  for (const name of readdirSync(dir).sort()) {
    if (/\.(js|css|svg)$/.test(name)) raw.set(name, readFileSync(join(dir, name)));
  }
  const marked = createRequire(import.meta.url).resolve("marked");
  raw.set("marked.js", readFileSync(join(dirname(marked), "marked.esm.js")));
  const hash = createHash("sha256");
  for (const [name, body] of raw) hash.update(name).update(body);
  const files = new Map<string, Asset>();
  for (const [name, body] of raw) {
    const ext = name.split(".").pop() ?? "";
    files.set(name, {
      type: TYPES[ext] ?? "application/octet-stream",
      body,
      gzip: gzipSync(body, { level: 9 }),
    });
  }
  loaded = { base: `/chat/assets/${hash.digest("hex").slice(0, 12)}/`, files };
  return loaded;
}

/** The JS and CSS a page loads, gzipped, in bytes (the page weight). */
export function pageWeight(assets: WebAssets = webAssets()): { raw: number; gzip: number } {
  let raw = 0;
  let gzip = 0;
  for (const a of assets.files.values()) {
    raw += a.body.length;
    gzip += a.gzip.length;
  }
  return { raw, gzip };
}
