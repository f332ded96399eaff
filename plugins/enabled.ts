/**
 * Which plugins are switched off, kept in `<plugins dir>/plugins-state.json` (`{ "disabled": [...] }`)
 * beside the plugins themselves, so the CLI, the gateway and workers sharing HERALD_HOME agree. A plugin
 * is enabled unless listed.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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
 * Makes `import … from "herald/plugin"` resolve in plugins without an install: links
 * `<dir>/node_modules/herald` to this package (left alone when something is already there).
 */
export function linkSdk(dir: string): void {
  const link = join(dir, "node_modules", "herald");
  try {
    lstatSync(link);
    return;
  } catch {
    // Not there yet.
  }
  const root = packageRoot();
  if (!root) return;
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(root, link, "dir");
}

/** This package's folder (the one whose package.json is Herald's), from source or from dist/. */
function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "herald")
      return dir;
    dir = resolve(dir, "..");
  }
  return undefined;
}
