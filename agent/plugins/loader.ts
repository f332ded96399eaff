/**
 * Finding and loading plugins: every folder of the plugins directory with a `plugin.json` is one; its
 * manifest is validated with zod and its ESM entry imported. A failure (bad manifest, syntax error, a
 * throw while loading, a default export of the wrong shape) becomes a {@link PluginLoadError} naming
 * the file and, where the error says it, the line.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { compareCodePoints } from "../../core/code-points.js";
import { describeError } from "../../core/errors.js";
import { CAPABILITIES, type PluginDefinition, type PluginManifest } from "./sdk.js";

/** A plugin that could not be loaded: what went wrong, in which file, at which line when known. */
export class PluginLoadError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number | undefined,
  ) {
    super(message);
    this.name = "PluginLoadError";
  }

  /** `file:line: message` (the line when known). */
  describe(): string {
    return `${this.file}${this.line ? `:${this.line}` : ""}: ${this.message}`;
  }
}

const NAME = /^[a-z][a-z0-9-]{0,63}$/;
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

const manifestSchema = z.strictObject({
  name: z.string().regex(NAME, "lowercase letters, digits and '-', starting with a letter"),
  version: z.string().min(1),
  description: z.string().optional(),
  capabilities: z.array(z.enum(CAPABILITIES)).default([]),
  main: z
    .string()
    .regex(/^[^/\\].*\.m?js$/, "a relative path to a .js or .mjs file")
    .refine((p) => !p.split(/[/\\]/).includes(".."), "must stay inside the plugin's folder")
    .default("index.js"),
});

/** The folders of `dir` that hold a `plugin.json`, by folder name (sorted by code point). */
export function discoverPlugins(dir: string): { name: string; dir: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !name.startsWith(".") && name !== "node_modules")
    .map((name) => ({ name, dir: join(dir, name) }))
    .filter((p) => statSync(p.dir).isDirectory() && existsSync(join(p.dir, "plugin.json")))
    .sort((a, b) => compareCodePoints(a.name, b.name));
}

/** Reads and validates `<dir>/plugin.json`. @throws PluginLoadError */
export function readManifest(dir: string, folderName: string): PluginManifest {
  const file = join(dir, "plugin.json");
  const text = readFileSync(file, "utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message);
    const line = at ? text.slice(0, Number(at[1])).split("\n").length : undefined;
    throw new PluginLoadError(`plugin.json is not valid JSON: ${(err as Error).message}`, file, line);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join(".") || "(the file)";
    throw new PluginLoadError(`plugin.json: ${key}: ${issue.message}`, file);
  }
  if (parsed.data.name !== folderName) {
    throw new PluginLoadError(
      `plugin.json names the plugin '${parsed.data.name}' but its folder is '${folderName}': rename one so they match.`,
      file,
    );
  }
  return parsed.data;
}

/**
 * Imports the plugin's entry and checks its default export. `generation` makes a reload import a fresh
 * copy of the entry (files it imports itself stay cached until a restart). @throws PluginLoadError
 */
export async function importPlugin(
  dir: string,
  manifest: PluginManifest,
  generation: number,
): Promise<PluginDefinition> {
  const file = join(dir, manifest.main);
  if (!existsSync(file)) {
    throw new PluginLoadError(`the entry ${manifest.main} named by plugin.json does not exist`, file);
  }
  let module: { default?: unknown };
  try {
    module = (await import(/* @vite-ignore */ `${pathToFileURL(file).href}?v=${generation}`)) as {
      default?: unknown;
    };
  } catch (err) {
    const where = locate(err, dir) ?? { file, line: syntaxErrorLine(err, file) };
    throw new PluginLoadError(`loading failed: ${firstLine(err)}`, where.file, where.line);
  }
  return checkDefinition(module.default, file);
}

/** The first file of the plugin's folder an error's stack (or message) names, with its line. */
function locate(err: unknown, dir: string): { file: string; line: number } | undefined {
  const text = `${(err as Error)?.message ?? ""}\n${(err as Error)?.stack ?? ""}`;
  const escaped = dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const m = new RegExp(`(${escaped}/[^\\s:)?]+)(?:\\?v=\\d+)?:(\\d+)`).exec(text);
  return m ? { file: m[1]!, line: Number(m[2]) } : undefined;
}

/**
 * Node's ESM loader keeps a syntax error's position out of the error it throws; `node --check` on the
 * source as a module prints it (`[stdin]:<line>`). Only run on that failure path.
 */
function syntaxErrorLine(err: unknown, file: string): number | undefined {
  if (!(err instanceof SyntaxError)) return undefined;
  const check = spawnSync(process.execPath, ["--input-type=module", "--check"], {
    input: readFileSync(file, "utf8"),
    encoding: "utf8",
    timeout: 10_000,
  });
  const m = /^\[stdin\]:(\d+)/m.exec(check.stderr ?? "");
  return m ? Number(m[1]) : undefined;
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : describeError(err);
  return message.split("\n")[0]!.slice(0, 300);
}

/** Checks the shape of a default export. @throws PluginLoadError naming what is wrong */
function checkDefinition(value: unknown, file: string): PluginDefinition {
  const fail = (why: string): never => {
    throw new PluginLoadError(why, file);
  };
  if (!value || typeof value !== "object") {
    fail("the entry must `export default definePlugin({ tools, commands, hooks })`");
  }
  const def = value as Record<string, unknown>;
  for (const key of Object.keys(def)) {
    if (!["tools", "commands", "hooks"].includes(key)) {
      fail(`unknown key '${key}' in the definition: use tools, commands, hooks`);
    }
  }
  if (def["tools"] !== undefined && !Array.isArray(def["tools"])) fail("`tools` must be an array");
  for (const [i, tool] of ((def["tools"] as unknown[] | undefined) ?? []).entries()) {
    const t = (tool ?? {}) as Record<string, unknown>;
    if (typeof t["name"] !== "string" || !TOOL_NAME.test(t["name"])) {
      fail(`tools[${i}].name must be lowercase letters, digits and '_', starting with a letter`);
    }
    if (typeof t["description"] !== "string" || !t["description"]) fail(`tools[${i}] needs a description`);
    if (typeof (t["parameters"] as { safeParse?: unknown } | undefined)?.safeParse !== "function") {
      fail(`tools[${i}].parameters must be a zod schema (import { z } from "herald/plugin")`);
    }
    if (typeof t["execute"] !== "function") fail(`tools[${i}].execute must be a function`);
  }
  const commands = def["commands"];
  if (commands !== undefined && (typeof commands !== "object" || commands === null)) {
    fail("`commands` must be an object of name → { description, run }");
  }
  for (const [name, command] of Object.entries((commands ?? {}) as Record<string, unknown>)) {
    if (!/^[a-z][a-z0-9_-]{0,63}$/.test(name)) fail(`command name '${name}' must be lowercase`);
    if (typeof (command as { run?: unknown } | null)?.run !== "function") {
      fail(`commands.${name}.run must be a function`);
    }
  }
  const hooks = def["hooks"];
  if (hooks !== undefined && (typeof hooks !== "object" || hooks === null)) fail("`hooks` must be an object");
  const points = ["inbound", "beforeToolCall", "afterToolCall", "beforeReply", "turnFinished"];
  for (const [point, fn] of Object.entries((hooks ?? {}) as Record<string, unknown>)) {
    if (!points.includes(point)) fail(`unknown hook '${point}': use ${points.join(", ")}`);
    if (typeof fn !== "function") fail(`hooks.${point} must be a function`);
  }
  return def as PluginDefinition;
}
