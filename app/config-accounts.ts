/**
 * A platform's further bot accounts: `<platform>.accounts: [{ name, ...keys }]` in config.yaml, for two
 * bots of one platform in one gateway (a work bot and a family bot on Telegram). Each account is the
 * platform's section again, its own keys over the section's (an account inherits what it does not
 * set: the API root, the allowlist, require_mention …), read by the platform module's own schema, and
 * runs as an adapter of its own whose chats are `<platform>@<name>:<chat>` (core/chat.ts). Its
 * variables are the platform's with the account's name after the prefix: `TELEGRAM_FAMILY_BOT_TOKEN`
 * sets `telegram.accounts[name=family].bot_token`. Generic: no platform is named here.
 */
import { accountPlatform } from "../core/chat.js";
import { ConfigError } from "../core/errors.js";
import type { PlatformCommonConfig, PlatformModule } from "../core/platform.js";
import type { EnvKind } from "../core/settings.js";
import { camelKeys, camelToSnake, coerce, setPath } from "./config-values.js";

/** Names an account may have: they appear in chat strings, env names and state keys. */
const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/**
 * Takes `accounts` out of every platform section of the raw config (the sections' schemas refuse
 * unknown keys) and returns them by platform. @throws ConfigError for an `accounts` that is no list
 */
export function takeAccounts(
  raw: Record<string, unknown>,
  modules: readonly PlatformModule[],
): Map<string, Record<string, unknown>[]> {
  const taken = new Map<string, Record<string, unknown>[]>();
  for (const module of modules) {
    const section = raw[module.name];
    if (!section || typeof section !== "object" || !("accounts" in section)) continue;
    const { accounts, ...rest } = section as Record<string, unknown>;
    raw[module.name] = rest;
    if (accounts == null) continue;
    if (!Array.isArray(accounts) || accounts.some((a) => !a || typeof a !== "object" || Array.isArray(a))) {
      throw new ConfigError(
        `${module.name}.accounts`,
        `config.yaml: ${module.name}.accounts must be a list of mappings, each with a name (- name: family). Fix: write it as a YAML list.`,
      );
    }
    taken.set(module.name, accounts as Record<string, unknown>[]);
  }
  return taken;
}

/**
 * Parses a platform's accounts: each over the section's raw keys `base`, with its env variables, by
 * the module's schema and checks. Returns each section by its platform name (`telegram@family`).
 * An account must have its credentials where the process starts adapters (`adapters`, default true).
 * @throws ConfigError naming the account's key and the fix
 */
export function readAccounts(
  module: PlatformModule,
  base: Record<string, unknown> | undefined,
  accounts: readonly Record<string, unknown>[],
  read: {
    env: Readonly<Record<string, string | undefined>>;
    envTable: Readonly<Record<string, readonly [path: string, kind: EnvKind]>>;
    adapters?: boolean | undefined;
  },
): Record<string, PlatformCommonConfig> {
  const { env, envTable } = read;
  const p = module.name;
  const out: Record<string, PlatformCommonConfig> = {};
  for (const [i, account] of accounts.entries()) {
    const where = `${p}.accounts.${i}`;
    const { name, ...keys } = camelKeys(account) as Record<string, unknown>;
    if (typeof name !== "string" || !ACCOUNT_NAME.test(name) || name === "default") {
      throw new ConfigError(
        `${where}.name`,
        `config.yaml: ${where}.name must be a name of lowercase letters, digits, '-' or '_' (not 'default', which is the section itself), got ${JSON.stringify(name)}. Fix: e.g. name: family.`,
      );
    }
    const key = accountPlatform(p, name);
    if (out[key]) {
      throw new ConfigError(
        `${where}.name`,
        `config.yaml: ${p}.accounts has two accounts named '${name}'. Fix: give each account its own name.`,
      );
    }
    const merged: Record<string, unknown> = { ...structuredClone(base ?? {}), ...keys };
    applyAccountEnv(merged, p, name, env, envTable);
    const parsed = module.schema.safeParse(merged, { jitless: true });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.map((x) => camelToSnake(String(x))).join(".");
      const what =
        issue.code === "unrecognized_keys"
          ? `has an unknown key '${issue.keys.map(camelToSnake).join("', '")}'`
          : `${path} is invalid: ${issue.message}`;
      throw new ConfigError(
        `${where}.${path}`,
        `config.yaml: account '${name}' of ${p} ${what}. Fix: correct it.`,
      );
    }
    const section = parsed.data;
    module.validate?.(section);
    if (read.adapters !== false && !module.isConfigured(section)) {
      throw new ConfigError(
        where,
        `config.yaml: account '${name}' of ${p} lacks what the platform needs to start (its token or credentials). Fix: set them in the account, or as ${p.toUpperCase()}_${name.toUpperCase().replace(/-/g, "_")}_<VARIABLE>.`,
      );
    }
    out[key] = section;
  }
  return out;
}

/** Sets the account's keys its variables name: `<P>_<NAME>_<REST>` for each `<P>_<REST>` of the platform. */
function applyAccountEnv(
  target: Record<string, unknown>,
  platform: string,
  name: string,
  env: Readonly<Record<string, string | undefined>>,
  envTable: Readonly<Record<string, readonly [path: string, kind: EnvKind]>>,
): void {
  const P = platform.toUpperCase();
  const N = name.toUpperCase().replace(/-/g, "_");
  for (const [envName, [path, kind]] of Object.entries(envTable)) {
    if (!path.startsWith(`${platform}.`) || !envName.startsWith(`${P}_`)) continue;
    const own = `${P}_${N}_${envName.slice(P.length + 1)}`;
    const raw = env[own];
    if (raw === undefined || raw === "") continue;
    setPath(target, path.slice(platform.length + 1), coerce(own, raw, kind));
  }
}
