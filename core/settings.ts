/**
 * What a module declares of its settings, in one place: its config section (a zod schema), the
 * environment variables that set it, its rows of the configuration reference, and its `herald doctor`
 * checks. Platforms declare theirs in a `PlatformModule` (core/platform.ts), every other feature with
 * settings in a `FeatureModule` (here). The composition root keeps one list of each; the config loader,
 * `herald setup`, `herald doctor` and docs/configuration.md are built from those lists.
 */
import type { z } from "zod";
import type { SetupQuestions } from "./setup.js";

/** How an environment variable's text becomes a config value. */
export type EnvKind = "string" | "int" | "bool" | "list" | "url";

/**
 * Env names and the key each sets: inside the module's section, snake_case as written in config.yaml,
 * dotted for nested keys (`search.base_url`).
 */
export type EnvTable = Readonly<Record<string, readonly [key: string, kind: EnvKind]>>;

/**
 * One row of the configuration reference: the key (inside the section, snake_case; several keys in one
 * row are separated by `, `, and `.name` stands for a sibling of the key before it), what it means, its
 * default as the reader should see it, and what the env column says when no env name sets the key (a
 * key that names a variable: "the name given"). Without a default the reference shows the schema's own
 * (`none` for an optional key, `required` for a key without default).
 */
export type ConfigRow = readonly [key: string, meaning: string, defaultText?: string, envText?: string];

/** A section of docs/configuration.md. */
export interface ConfigReference {
  /** The heading. @defaultValue the section's key as written in config.yaml */
  readonly title?: string;
  /** A paragraph under the heading, before the table. */
  readonly intro?: string;
  readonly rows: readonly ConfigRow[];
}

/** One line of `herald doctor`: a check that passed or failed, with the fix for a failure (or a hint). */
export interface DoctorLine {
  ok: boolean;
  text: string;
  fix?: string;
}

/** What a doctor check may know besides its own section. */
export interface DoctorContext {
  /** `HERALD_HOME`. */
  readonly homeDir: string;
  /**
   * The bot account the section is (`family` of `telegram.accounts`), absent for the platform's own
   * section. Its lines are named `<platform>@<account>` and its variables `<P>_<ACCOUNT>_<REST>`
   * (see {@link doctorNames}).
   */
  readonly account?: string | undefined;
}

/**
 * What a platform's doctor lines call its section: the name (`telegram`, `telegram@family`) and a
 * variable of it (`TELEGRAM_BOT_TOKEN`, `TELEGRAM_FAMILY_BOT_TOKEN` for `rest` `BOT_TOKEN`).
 */
export function doctorNames(
  platform: string,
  context: DoctorContext,
): { name: string; variable: (rest: string) => string } {
  const P = platform.toUpperCase();
  const account = context.account;
  if (!account) return { name: platform, variable: (rest) => `${P}_${rest}` };
  const N = account.toUpperCase().replace(/-/g, "_");
  return { name: `${platform}@${account}`, variable: (rest) => `${P}_${N}_${rest}` };
}

/** What turning a parsed section into its runtime form may read. */
export interface ResolveContext {
  /** The environment as the loader read it (the process's over `HERALD_HOME/.env`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `HERALD_HOME`. */
  readonly homeDir: string;
}

/**
 * A feature with settings (exec, web, voice, MCP servers, plugins, the dashboard …). `K` is its key in
 * the loaded config, `S` its parsed section, `R` what the process uses (`S` unless `resolve` changes it).
 */
export interface FeatureModule<K extends string = string, S = unknown, R = S> {
  /** The section's key in the loaded config, camelCase; config.yaml writes it snake_case (`task_board:`). */
  readonly key: K;
  /** The section (keys camelCase once loaded); it parses from nothing unless the section is optional. */
  readonly schema: z.ZodType<S>;
  /** The environment variables that set keys of the section. */
  readonly env: EnvTable;
  /** The section's part of docs/configuration.md: every key, and every env name above. */
  readonly reference: ConfigReference;
  /**
   * The section as the process uses it, after parsing (secrets read from the variables it names).
   * @throws ConfigError naming the key and the fix
   */
  resolve?(section: S, context: ResolveContext): R;
  /** `herald doctor`'s lines for the feature. Must not throw: a failed check is a line with `ok: false`. */
  doctor?(section: R, context: DoctorContext): DoctorLine[] | Promise<DoctorLine[]>;
  /** Its optional step of `herald setup` ("Optional settings"), with its flags. */
  readonly setup?: SetupQuestions | undefined;
  /**
   * The section as written in config.yaml with its keys camelCased, for sections whose keys are also
   * names kept as written (MCP server names, env names). @defaultValue every key at every depth
   */
  camelKeys?(section: unknown): unknown;
}

/** Declares a feature with its key, section and runtime types inferred. */
export function defineFeature<const K extends string, S, R = S>(
  module: FeatureModule<K, S, R>,
): FeatureModule<K, S, R> {
  return module;
}
