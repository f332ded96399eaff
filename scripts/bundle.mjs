#!/usr/bin/env node
/**
 * Part of `npm run build`: the bundle `npm start` runs, `dist/bundle/cli.js`. Node loads an ES module
 * graph file by file (resolve, read, compile, link each): before its first poll the gateway loaded ~290
 * modules of dist/ and zod, and yaml's, commander's and the other small packages' CommonJS files, about
 * a quarter of its start. The bundle is the same compiled modules in a few files: what the first poll
 * needs in one chunk, each lazily imported part in chunks of its own, loaded when first used as before.
 * Herald's code and the plain-JavaScript packages in `BUNDLED` are bundled; every other package stays an
 * import of node_modules (native addons, wasm, workers and files found beside themselves). yaml is built
 * apart, into one CommonJS file beside the chunks (`yaml.cjs`): `core/yaml.ts` requires it on first use
 * (a config.yaml, a SKILL.md), so it is not compiled before the first poll, nor loaded as the package's
 * ~70 files. Modules that read files beside them find them through `core/module-dir.ts`.
 */
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const BUNDLED = new Set(["zod", "commander", "dotenv", "marked", "grammy"]);
/** Every other package, dependency or not (wasm, native addons, files found beside themselves), is imported. */
const packagesOutside = {
  name: "packages-outside",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path }) => {
      const name = path
        .split("/")
        .slice(0, path.startsWith("@") ? 2 : 1)
        .join("/");
      return BUNDLED.has(name) ? undefined : { path, external: true };
    });
  },
};
/**
 * zod's `locales` namespace re-exports 40-odd languages' error messages, a quarter of the code before
 * the first poll; Herald selects none (its messages are English, zod's default), so only `en` is kept.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, ({ path }) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: dirname(path),
    }));
  },
};
const outdir = join(root, "dist", "bundle");
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "dist", "app", "cli.js")],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  plugins: [packagesOutside, zodEnglishOnly],
  sourcemap: "linked",
  // Less text for V8 to scan before the first poll (~4 % of the start); names stay, so stack traces
  // name their functions, and the linked maps give the lines (`node --enable-source-maps`).
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
  // CommonJS packages in the bundle require Node's builtins.
  banner: {
    js: 'import { createRequire as __heraldCreateRequire } from "node:module"; const require = __heraldCreateRequire(import.meta.url);',
  },
});
await build({
  entryPoints: [join(root, "node_modules", "yaml", "dist", "index.js")],
  outfile: join(outdir, "yaml.cjs"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
});
