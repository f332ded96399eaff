/**
 * The page's static files: `client/` as written (plain ES modules and one stylesheet: nothing to
 * compile; `npm run build` copies them beside the compiled adapter in `dist/`), `marked`'s browser
 * build and highlight.js's core and languages from node_modules. They are read once, gzipped once, and
 * served under `/chat/assets/<version>/`, where the version is a hash of all of them, so they are cached
 * for a year (`immutable`) and a new build is a new URL.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { moduleDir } from "../../core/module-dir.js";

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

/** Where `client/` is: beside this file (from source, and in `dist/`, where the build copies it), else in the sources. */
function clientDir(): string {
  const here = moduleDir(import.meta.url, "adapters/webchat");
  const candidates = [join(here, "client"), join(here, "..", "..", "..", "adapters", "webchat", "client")];
  const found = candidates.find((d) => existsSync(join(d, "app.js")));
  if (!found) throw new Error(`The web chat's page files are missing (looked in ${candidates.join(", ")}).`);
  return found;
}

/** The languages code blocks are coloured in (each is one small module, loaded with the first code block). */
export const HIGHLIGHTED = [
  "bash",
  "css",
  "diff",
  "go",
  "javascript",
  "json",
  "python",
  "rust",
  "shell",
  "sql",
  "typescript",
  "xml",
  "yaml",
] as const;

/** Files the page loads only when a reply has a fenced code block with a language. */
const ON_DEMAND = /^(hljs|highlight)/;

let loaded: WebAssets | undefined;

/** The page's files (read on first use). @throws when the package lacks them */
export function webAssets(): WebAssets {
  if (loaded) return loaded;
  const dir = clientDir();
  const raw = new Map<string, Buffer>();
  for (const name of readdirSync(dir).sort()) {
    if (/\.(js|css|svg)$/.test(name)) raw.set(name, readFileSync(join(dir, name)));
  }
  const require = createRequire(import.meta.url);
  raw.set("marked.js", readFileSync(join(dirname(require.resolve("marked")), "marked.esm.js")));
  // highlight.js's core is CommonJS without requires: wrapped as a module, it loads as one. Its
  // languages are modules already. Both load only when a reply has a fenced block with a language.
  const hljs = dirname(require.resolve("highlight.js/lib/core"));
  const core = readFileSync(join(hljs, "core.js"), "utf8");
  raw.set(
    "hljs.js",
    Buffer.from(`const module = { exports: {} };\n${core}\nexport default module.exports;\n`),
  );
  for (const lang of HIGHLIGHTED)
    raw.set(`hljs-${lang}.js`, readFileSync(join(hljs, "..", "es", "languages", `${lang}.js`)));
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

/**
 * The JS and CSS a page loads at once, and what it loads with its first highlighted code block, raw
 * and gzipped, in bytes (the page weight).
 */
export function pageWeight(assets: WebAssets = webAssets()): {
  raw: number;
  gzip: number;
  onDemandRaw: number;
  onDemandGzip: number;
} {
  const w = { raw: 0, gzip: 0, onDemandRaw: 0, onDemandGzip: 0 };
  for (const [name, a] of assets.files) {
    if (ON_DEMAND.test(name)) {
      w.onDemandRaw += a.body.length;
      w.onDemandGzip += a.gzip.length;
    } else {
      w.raw += a.body.length;
      w.gzip += a.gzip.length;
    }
  }
  return w;
}
