/**
 * Where a module's neighbouring files are. Each module of the sources (tsx) and of `dist/` finds them
 * beside itself; the bundle `npm start` runs (`dist/bundle/`, every module of the gateway in a few
 * files) has none beside it, and finds them where that module compiles to in `dist/`.
 */
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder of the module at `url` (its `import.meta.url`), or, when it runs from the bundle, the
 * folder it compiles to: `dist/<home>`, `home` being its folder from the package root ("skills").
 */
export function moduleDir(url: string, home: string): string {
  const dir = dirname(fileURLToPath(url));
  return basename(dir) === "bundle" && basename(dirname(dir)) === "dist" ? join(dirname(dir), home) : dir;
}
