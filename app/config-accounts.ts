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
    if (module.singleAccount && !(Array.isArray(accounts) && accounts.length === 0)) {
      throw new ConfigError(
        `${module.name}.accounts`,
        `config.yaml: ${module.name}.accounts is not supported: ${module.singleAccount}. Fix: remove ${module.name}.accounts.`,
      );
    }
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
    // What makes the account another bot (its token, its webhook) is never inherited, nor a
    // credential the section's server was given.
    const ownKeys = [...(module.accountKeys ?? []), ...(module.accountSecrets ?? [])];
    const inherited = structuredClone(base ?? {});
    for (const k of ownKeys) delete inherited[k];
    const merged: Record<string, unknown> = { ...inherited, ...keys };
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
    validateAccount(module, section, name, envTable);
    const own = ownKeys.map(camelToSnake);
    if (read.adapters !== false && !module.isConfigured(section)) {
      const notInherited = own.length > 0 ? `; an account inherits none of ${own.join(", ")}` : "";
      throw new ConfigError(
        where,
        `config.yaml: account '${name}' of ${p} lacks what the platform needs to start (its token or credentials${notInherited}). Fix: set them in the account, or as ${accountEnvPattern(p, name, envTable)}.`,
      );
    }
    for (const k of module.accountKeys ?? []) {
      const value = (section as unknown as Record<string, unknown>)[k];
      if (value === undefined || value !== base?.[k]) continue;
      throw new ConfigError(
        `${where}.${camelToSnake(k)}`,
        `config.yaml: account '${name}' of ${p} has the same ${camelToSnake(k)} as the ${p} section, which would make it the same bot (or put it behind the same webhook) twice. Fix: give the account its own ${camelToSnake(k)}.`,
      );
    }
    out[key] = section;
  }
  return out;
}

/**
 * An account's name for one of the platform's variables: the account's name after the variable's prefix,
 * before its key. `TELEGRAM_BOT_TOKEN` → `TELEGRAM_FAMILY_BOT_TOKEN`; a platform whose variables have a
 * prefix of their own keeps it: `TWILIO_AUTH_TOKEN` (`sms.auth_token`) → `TWILIO_FAMILY_AUTH_TOKEN`.
 */
export function accountEnvName(envName: string, snakePath: string, platform: string, name: string): string {
  const N = name.toUpperCase().replace(/-/g, "_");
  const P = platform.toUpperCase();
  if (envName.startsWith(`${P}_`)) return `${P}_${N}_${envName.slice(P.length + 1)}`;
  const key = `_${snakePath.split(".").at(-1)!.toUpperCase()}`;
  const prefix = envName.endsWith(key) ? envName.slice(0, -key.length) : envName.split("_")[0]!;
  return `${prefix}_${N}_${envName.slice(prefix.length + 1)}`;
}

/**
 * `text` (an account's adapter error) with the platform's variables named as the account's own: for
 * `telegram@family`, "TELEGRAM_BOT_TOKEN is set but getMe answered 401" names TELEGRAM_FAMILY_BOT_TOKEN.
 */
export function accountVariables(
  text: string,
  account: string,
  table: readonly { env: string; path: string }[],
): string {
  const at = account.indexOf("@");
  if (at < 0) return text;
  const platform = account.slice(0, at);
  const name = account.slice(at + 1);
  let out = text;
  for (const { env, path } of table) {
    if (!path.startsWith(`${platform}.`) || !out.includes(env)) continue;
    const own = accountEnvName(env, path.slice(platform.length + 1), platform, name);
    out = out.replace(new RegExp(`\\b${env}\\b`, "g"), own);
  }
  return out;
}

/** `TELEGRAM_FAMILY_<VARIABLE>` (and `TWILIO_FAMILY_<VARIABLE>` where the platform's own prefix differs). */
function accountEnvPattern(
  platform: string,
  name: string,
  envTable: Readonly<Record<string, readonly [path: string, kind: EnvKind]>>,
): string {
  const patterns = new Set<string>();
  for (const [envName, [path]] of Object.entries(envTable)) {
    if (!path.startsWith(`${platform}.`)) continue;
    const own = accountEnvName(envName, path.slice(platform.length + 1), platform, name);
    const N = name.toUpperCase().replace(/-/g, "_");
    patterns.add(`${own.slice(0, own.indexOf(`_${N}_`))}_${N}_<VARIABLE>`);
  }
  return [...patterns].join(" or ");
}

/**
 * The module's own checks on an account's section, their errors naming the account's variables
 * (`TWILIO_SHOP_FROM_NUMBER`, not the default account's `TWILIO_FROM_NUMBER`).
 */
function validateAccount(
  module: PlatformModule,
  section: PlatformCommonConfig,
  name: string,
  envTable: Readonly<Record<string, readonly [path: string, kind: EnvKind]>>,
): void {
  try {
    module.validate?.(section);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const path = envTable[err.key]?.[0];
    if (!path?.startsWith(`${module.name}.`)) throw err;
    const own = accountEnvName(err.key, path.slice(module.name.length + 1), module.name, name);
    throw new ConfigError(
      own,
      `config.yaml: account '${name}' of ${module.name}: ${err.message.replaceAll(err.key, own)}`,
      { cause: err },
    );
  }
}

/** Sets the account's keys its variables name (see {@link accountEnvName}). */
function applyAccountEnv(
  target: Record<string, unknown>,
  platform: string,
  name: string,
  env: Readonly<Record<string, string | undefined>>,
  envTable: Readonly<Record<string, readonly [path: string, kind: EnvKind]>>,
): void {
  for (const [envName, [path, kind]] of Object.entries(envTable)) {
    if (!path.startsWith(`${platform}.`)) continue;
    const key = path.slice(platform.length + 1);
    const own = accountEnvName(envName, key, platform, name);
    const raw = env[own];
    if (raw === undefined || raw === "") continue;
    setPath(target, key, coerce(own, raw, kind));
  }
}
