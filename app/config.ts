/**
 * The one reader of configuration: `HERALD_HOME/config.yaml`, then `HERALD_HOME/.env`, then the
 * environment (later wins), parsed with zod into one typed `HeraldConfig`. Every error names the key
 * (the env variable and the config.yaml path) and the fix. The sections come from three declarations:
 * the kernel's (app/kernel-settings.ts), each feature's (the list in app/features.ts) and each
 * platform's module (the list in app/platforms.ts); this file assembles them and names none.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import type { ResolvedWebhook } from "../adapters/webhooks/index.js";
import { type ExecSection, execBackendOptionsOf } from "../agent/exec/settings.js";
import { MODEL_APIS, type ModelApi } from "../agent/providers/types.js";
import { isLoopbackHost } from "../agent/tools/web/address.js";
import { basePlatform } from "../core/chat.js";
import { ConfigError } from "../core/errors.js";
import type { PlatformCommonConfig, PlatformModule } from "../core/platform.js";
import type { EnvKind } from "../core/settings.js";
import { assertTimeZone } from "../core/time-zone.js";
import { loadYaml } from "../core/yaml.js";
import { parseTargets } from "../scheduler/targets.js";
import { checkAgents } from "./agents.js";
import { readAccounts, takeAccounts } from "./config-accounts.js";
import { camelKeys, camelToSnake, coerce, setPath, snakeToCamel } from "./config-values.js";
import { type FeatureConfig, features } from "./features.js";
import { kernelEnv, kernelShape } from "./kernel-settings.js";
import { chatParser, platformModules } from "./platforms.js";

const schema = z.strictObject({
  ...kernelShape,
  ...Object.fromEntries(features.map((f) => [f.key, f.schema])),
  ...Object.fromEntries(platformModules.map((m) => [m.name, m.schema])),
});

/** The whole typed configuration plus where it came from. */
export type HeraldConfig = Omit<z.infer<z.ZodObject<typeof kernelShape>>, "providers"> &
  FeatureConfig & {
    /** The providers, each with its endpoint settled (a protocol's default when base_url is absent). */
    providers: (KernelProvider & { baseUrl: string })[];
    homeDir: string;
    /**
     * Each platform module's section, by platform name, parsed by the module's schema; a further bot
     * account's (`<platform>.accounts`) by its platform name `<platform>@<account>`.
     */
    platforms: Record<string, PlatformCommonConfig>;
  };

type KernelProvider = z.infer<z.ZodObject<typeof kernelShape>>["providers"][number];

/** Environment variables and the config path each sets. Every env name has a config.yaml equivalent. */
const ENV: Record<string, readonly [path: string, kind: EnvKind]> = { ...kernelEnv };

for (const feature of features) {
  const section = camelToSnake(feature.key);
  for (const [name, [key, kind]] of Object.entries(feature.env)) ENV[name] = [`${section}.${key}`, kind];
}

// Each platform's own variables, and the ones every platform has: `<P>_ALLOWED_USERS`, `<P>_HOME_CHANNEL`,
// `<P>_REQUIRE_MENTION`, `<P>_TOOLSETS`.
for (const module of platformModules) {
  const p = module.name;
  for (const [name, [key, kind]] of Object.entries(module.env)) ENV[name] = [`${p}.${key}`, kind];
  const P = p.toUpperCase();
  ENV[`${P}_ALLOWED_USERS`] = [`${p}.allowed_users`, "list"];
  ENV[`${P}_HOME_CHANNEL`] = [`${p}.home_channel`, "string"];
  ENV[`${P}_REQUIRE_MENTION`] = [`${p}.require_mention`, "bool"];
  ENV[`${P}_TOOLSETS`] = [`${p}.toolsets`, "list"];
}

/** Env names that hold secrets (never printed by `doctor`, never logged). */
export const SECRET_ENV = new Set(Object.keys(ENV).filter((k) => /TOKEN|KEY|PASSWORD|SECRET/.test(k)));

/** config.yaml's keys camelCased; a feature that keeps names in its section reads its own keys. */
function camelFile(parsed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    const camel = snakeToCamel(key);
    const feature = features.find((f) => f.key === camel);
    out[camel] = feature?.camelKeys ? feature.camelKeys(value) : camelKeys(value);
  }
  return out;
}

/** The env name that sets a config path, for error messages. */
function envNameFor(snakePath: string): string | undefined {
  return Object.entries(ENV).find(([, [p]]) => p === snakePath)?.[0];
}

export interface LoadConfigOptions {
  /** The environment to read. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * The process starts platform adapters. `false` (`herald worker`): a bot account without its token
   * or credentials is no error, since the tokens live in the gateway's environment only.
   * @defaultValue true
   */
  adapters?: boolean;
}

/** Resolves `HERALD_HOME` (default `~/.herald`). */
export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env["HERALD_HOME"];
  if (raw) return resolve(raw.replace(/^~(?=$|\/)/, homedir()));
  return join(homedir(), ".herald");
}

/**
 * Loads and validates the configuration.
 * @throws ConfigError naming the key and the fix.
 */
export function loadConfig(options: LoadConfigOptions = {}): HeraldConfig {
  const processEnv = options.env ?? process.env;
  const homeDir = resolveHome(processEnv);

  let fileValues: Record<string, unknown> = {};
  const yamlPath = join(homeDir, "config.yaml");
  if (existsSync(yamlPath)) {
    let parsed: unknown;
    try {
      parsed = loadYaml().parse(readFileSync(yamlPath, "utf8"));
    } catch (err) {
      throw new ConfigError(
        "config.yaml",
        `${yamlPath} is not valid YAML: ${(err as Error).message}. Fix the file.`,
        {
          cause: err,
        },
      );
    }
    if (parsed != null && (typeof parsed !== "object" || Array.isArray(parsed))) {
      throw new ConfigError("config.yaml", `${yamlPath} must be a mapping of keys (model:, telegram:, ...).`);
    }
    fileValues = camelFile((parsed ?? {}) as Record<string, unknown>);
  }

  const dotenvPath = join(homeDir, ".env");
  const dotenv = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath)) : {};
  // The real environment wins over HERALD_HOME/.env.
  const env: Record<string, string | undefined> = { ...dotenv, ...processEnv };

  for (const [name, [path, kind]] of Object.entries(ENV)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    setPath(fileValues, path, coerce(name, raw, kind));
  }
  const accounts = takeAccounts(fileValues, platformModules);

  // Parsed once per process: zod's compiled fast path would cost more to generate than it saves.
  const result = schema.safeParse(fileValues, { jitless: true });
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const snakePath = issue.path.map((p) => camelToSnake(String(p))).join(".");
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map(camelToSnake);
      const where = snakePath ? `${snakePath}.` : "";
      throw new ConfigError(
        `${where}${keys[0]}`,
        `config.yaml has an unknown key '${where}${keys.join(`', '${where}`)}'. Fix: remove it or check its spelling against the README's configuration table.`,
      );
    }
    const envName = envNameFor(snakePath);
    const keyName = envName ? `${envName} (config.yaml: ${snakePath})` : `config.yaml: ${snakePath}`;
    throw new ConfigError(
      envName ?? snakePath,
      `${keyName} is invalid: ${issue.message}. Fix: correct the value.`,
    );
  }
  const data: Record<string, unknown> = result.data;
  const platforms = takePlatforms(data, fileValues, accounts, {
    env,
    envTable: ENV,
    adapters: options.adapters,
  });
  for (const feature of features) {
    if (feature.resolve) data[feature.key] = feature.resolve(data[feature.key], { env, homeDir });
  }
  // Each section was parsed by its declaration's schema and resolved by its own `resolve`.
  const config = { ...data, homeDir, platforms } as HeraldConfig;
  config.webhooks.forEach(checkWebhookTargets);
  resolveProviders(config, env, fileValues);
  validateCrossFields(config);
  checkAgents(config, [...platformModules.map((m) => m.name), "api", "cli"]);
  return config;
}

/**
 * Moves each platform's parsed section out of `data`, checked by its module, with its bot accounts
 * (read over the section's raw keys `fileValues`) beside it by their platform names.
 */
function takePlatforms(
  data: Record<string, unknown>,
  fileValues: Record<string, unknown>,
  accounts: ReadonlyMap<string, Record<string, unknown>[]>,
  read: Parameters<typeof readAccounts>[3],
): Record<string, PlatformCommonConfig> {
  const platforms: Record<string, PlatformCommonConfig> = {};
  for (const module of platformModules) {
    const section = data[module.name] as PlatformCommonConfig;
    delete data[module.name];
    module.validate?.(section);
    platforms[module.name] = section;
    const raw = fileValues[module.name] as Record<string, unknown> | undefined;
    Object.assign(platforms, readAccounts(module, raw, accounts.get(module.name) ?? [], read));
  }
  return platforms;
}

/**
 * Reads each provider's key from its env variable (the environment, then HERALD_HOME/.env) and settles
 * `model.default`. Provider names must be unique.
 */
function resolveProviders(
  config: HeraldConfig,
  env: Record<string, string | undefined>,
  given: Record<string, unknown>,
): void {
  const seen = new Set<string>();
  for (const [i, provider] of config.providers.entries()) {
    if (seen.has(provider.name)) {
      throw new ConfigError(
        `providers.${i}.name`,
        `config.yaml: providers has two entries named '${provider.name}'. Fix: give each provider its own name.`,
      );
    }
    seen.add(provider.name);
    settleEndpoint(provider, i, env);
    const keyEnv = provider.apiKeyEnv;
    const key = keyEnv ? env[keyEnv]?.trim() : undefined;
    if (keyEnv && !key) {
      throw new ConfigError(
        keyEnv,
        `Provider '${provider.name}' reads its key from ${keyEnv} (config.yaml: providers.${i}.api_key_env), which is not set. Fix: add ${keyEnv}=<key> to HERALD_HOME/.env or the environment, or remove api_key_env for a server that needs no key.`,
      );
    }
    (provider as { apiKey?: string }).apiKey = key;
  }
  const model = given["model"] as Record<string, unknown> | undefined;
  const first = config.providers[0];
  if (!config.model.default) {
    config.model.default =
      first && model?.["name"] === undefined ? `${first.name}/${first.models[0]!.name}` : config.model.name;
  }
}

/** Where a protocol's vendor serves it when `base_url` is not given. */
const DEFAULT_BASE_URLS: Partial<Record<ModelApi, string>> = {
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
};

/**
 * Gives a provider without `base_url` its protocol's endpoint and checks that the protocol is one this
 * build speaks. @throws ConfigError naming the key and the fix
 */
function settleEndpoint(provider: KernelProvider, i: number, env: Record<string, string | undefined>): void {
  const api = provider.api;
  if (api && !MODEL_APIS.includes(api)) {
    throw new ConfigError(
      `providers.${i}.api`,
      `config.yaml: providers.${i}.api is '${api}', which this version of Herald does not speak yet (it speaks ${MODEL_APIS.join(", ")}). Fix: use one of those, or reach the model through an OpenAI-compatible gateway (api: openai-chat).`,
    );
  }
  if (provider.baseUrl) return;
  // Bedrock's endpoint is regional: the region of the AWS environment.
  const region = env["AWS_REGION"] ?? env["AWS_DEFAULT_REGION"];
  const url =
    api === "bedrock" && region
      ? `https://bedrock-runtime.${region}.amazonaws.com`
      : api
        ? DEFAULT_BASE_URLS[api]
        : undefined;
  if (!url) {
    throw new ConfigError(
      `providers.${i}.base_url`,
      `config.yaml: provider '${provider.name}' has no base_url. Fix: set providers.${i}.base_url to its endpoint (e.g. https://openrouter.ai/api/v1), or set api: anthropic or api: gemini for Anthropic's or Google's own API (api: bedrock takes its region from AWS_REGION).`,
    );
  }
  provider.baseUrl = url;
}

/** The providers with the key each read from its env variable (set by the loader; never logged). */
export type ProviderConfig = HeraldConfig["providers"][number] & { apiKey?: string | undefined };

/** True when `host` accepts connections only from this machine (exact; see agent/tools/web/address.ts). */
export { isLoopbackHost };

function validateCrossFields(config: HeraldConfig): void {
  const api = config.apiServer;
  if (api.enabled && !isLoopbackHost(api.host) && !api.key) {
    throw new ConfigError(
      "API_SERVER_KEY",
      `API_SERVER_HOST is ${api.host} (reachable from other machines) but API_SERVER_KEY is not set. Fix: set API_SERVER_KEY to a long random string, or set API_SERVER_HOST=127.0.0.1.`,
    );
  }
  // Sandboxed commands with the network share the host's loopback, where a key-less API server answers
  // as the owner (send anywhere, run turns) and a login-less dashboard shows every transcript: any
  // agent's sandbox (`agents[].exec_backend`) as much as the default one's.
  const sandboxed = [config.exec.backend, ...config.agents.map((a) => a.execBackend)].includes("sandbox");
  if (api.enabled && !api.key && sandboxed && config.exec.networkAllowed) {
    throw new ConfigError(
      "API_SERVER_KEY",
      `HERALD_EXEC_NETWORK is on, so commands in the sandbox share this machine's network and can reach the API server on ${api.host}:${api.port}, which without API_SERVER_KEY answers them as the owner. Fix: set API_SERVER_KEY to a long random string (the dashboard then asks for it too), or set API_SERVER_ENABLED=false, or turn HERALD_EXEC_NETWORK off.`,
    );
  }
  try {
    assertTimeZone(config.timezone);
  } catch {
    throw new ConfigError(
      "HERALD_TIMEZONE",
      `HERALD_TIMEZONE (config.yaml: timezone) '${config.timezone}' is not a known time zone. Fix: use an IANA name such as Europe/Berlin.`,
    );
  }
  if (config.queue.redisUrl && !/^rediss?:\/\//.test(config.queue.redisUrl)) {
    throw new ConfigError(
      "REDIS_URL",
      `REDIS_URL must start with redis:// or rediss://, got '${config.queue.redisUrl}'. Fix: e.g. REDIS_URL=redis://127.0.0.1:6379.`,
    );
  }
}

/** A webhook's `deliver` must be a target list (as cron's). @throws ConfigError naming the key */
function checkWebhookTargets(route: ResolvedWebhook, i: number): void {
  try {
    parseTargets(route.deliver, {
      hasOrigin: false,
      knownPlatforms: new Set([...platformModules.map((m) => m.name), "api"]),
      parseChat: chatParser,
    });
  } catch (err) {
    throw new ConfigError(
      `webhooks.${i}.deliver`,
      `config.yaml: webhooks.${i}.deliver ('${route.deliver}') is not a delivery target: ${(err as Error).message}`,
    );
  }
}

/** The modules of the platforms whose credentials are configured (the adapters the gateway starts). */
export function configuredPlatforms(config: HeraldConfig): PlatformModule[] {
  return platformModules.filter((m) => {
    const section = config.platforms[m.name];
    return section !== undefined && m.isConfigured(section);
  });
}

/**
 * The further bot accounts (`<platform>.accounts`) of the configured platforms: each account's platform
 * name (`telegram@family`), its module and its section.
 */
export function configuredAccounts(
  config: HeraldConfig,
): { name: string; module: PlatformModule; section: PlatformCommonConfig }[] {
  return Object.entries(config.platforms).flatMap(([name, section]) => {
    const module = platformModules.find((m) => m.name === basePlatform(name));
    return name !== basePlatform(name) && module ? [{ name, module, section }] : [];
  });
}

/** A platform's section, typed by its module (the loader parsed it with that module's schema). */
export function sectionOf<C extends PlatformCommonConfig>(
  config: HeraldConfig,
  module: PlatformModule<C>,
): C {
  return config.platforms[module.name] as C;
}

/** Every env variable Herald reads, with its config.yaml path (the reference page, `doctor`). */
export function envTable(): { env: string; path: string; secret: boolean }[] {
  return Object.entries(ENV).map(([env, [path]]) => ({ env, path, secret: SECRET_ENV.has(env) }));
}

/** The execution backend's own options out of the `exec` section (the rest is the tools' settings). */
export function execBackendOptions(config: { exec: ExecSection }) {
  return execBackendOptionsOf(config.exec);
}
