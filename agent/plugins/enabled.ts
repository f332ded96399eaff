/**
 * Which plugins are switched off, kept in `<plugins dir>/plugins-state.json` (`{ "disabled": [...] }`)
 * beside the plugins themselves, so the CLI, the gateway and workers sharing HERALD_HOME agree. A plugin
 * is enabled unless listed.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { moduleDir } from "../../core/module-dir.js";

/** The file holding the disabled list. */
export const STATE_FILE = "plugins-state.json";

/** Names of the disabled plugins (none when the file is missing or unreadable). */
export function readDisabled(dir: string): Set<string> {
  const file = join(dir, STATE_FILE);
  if (!existsSync(file)) return new Set();
  try {
    const json = JSON.parse(readFileSync(file, "utf8")) as { disabled?: unknown };
    return new Set(Array.isArray(json.disabled) ? json.disabled.filter((n) => typeof n === "string") : []);
  } catch {
    return new Set();
  }
}

/** Switches a plugin on or off (atomically rewrites the file). */
export function setEnabled(dir: string, name: string, enabled: boolean): void {
  const disabled = readDisabled(dir);
  if (enabled) disabled.delete(name);
  else disabled.add(name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, STATE_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ disabled: [...disabled].sort() }, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/**
 * Makes `import … from "herald/plugin"` resolve in plugins without an install, to the very module this
 * process runs (source under tsx and in tests, `dist/` in production): writes a small package at
 * `<dir>/node_modules/herald` whose `plugin` entry re-exports it. A real package installed there (one
 * without the `heraldShim` mark) is left alone.
 */
export function linkSdk(dir: string): void {
  const target = join(dir, "node_modules", "herald");
  const pkgFile = join(target, "package.json");
  if (existsSync(target)) {
    if (lstatSync(target).isSymbolicLink() || !existsSync(pkgFile)) return;
    const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { heraldShim?: boolean };
    if (!pkg.heraldShim) return;
  }
  const here = moduleDir(import.meta.url, "agent/plugins");
  const sdk = ["sdk.js", "sdk.ts"].map((f) => join(here, f)).find((f) => existsSync(f));
  if (!sdk) return;
  const types =
    [resolve(here, "../../../agent/plugins/sdk.ts"), join(here, "sdk.ts")].find((f) => existsSync(f)) ?? sdk;
  const files: Record<string, string> = {
    "package.json": `${JSON.stringify(
      {
        name: "herald",
        private: true,
        type: "module",
        heraldShim: true,
        exports: { "./plugin": { types: "./plugin.d.ts", default: "./plugin.js" } },
      },
      null,
      2,
    )}\n`,
    // Absolute specifiers are URL paths to Node: percent-encoded as a file URL's path.
    "plugin.js": `export * from ${JSON.stringify(pathToFileURL(sdk).pathname)};\n`,
    "plugin.d.ts": `export * from ${JSON.stringify(types.replace(/\.ts$/, ".js"))};\n`,
  };
  mkdirSync(target, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    const file = join(target, name);
    if (existsSync(file) && readFileSync(file, "utf8") === text) continue;
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  }
}
