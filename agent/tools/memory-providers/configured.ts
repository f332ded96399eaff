/**
 * The memory providers `memory.providers` turns on, built, and `herald doctor`'s live check of them;
 * apart from `settings.ts`, which the config reads at every start, so that the providers' clients load
 * where they run.
 */
import { ConfigError } from "../../../core/errors.js";
import type { DoctorLine } from "../../../core/settings.js";
import { createHonchoProvider } from "./honcho.js";
import { createMem0Provider } from "./mem0.js";
import type { KeyRead, MemoryProvidersConfig } from "./settings.js";
import type { MemoryProvider } from "./types.js";

/**
 * The providers `config` turns on, in a fixed order (Honcho, then Mem0).
 * @throws ConfigError naming the variable of a key that is needed and not set
 */
export function configuredProviders(config: MemoryProvidersConfig): MemoryProvider[] {
  if (config.honcho) needKey(config.honcho, "honcho");
  if (config.mem0) needKey(config.mem0, "mem0");
  return [
    ...(config.honcho ? [createHonchoProvider(config.honcho)] : []),
    ...(config.mem0 ? [createMem0Provider(config.mem0)] : []),
  ];
}

/** `herald doctor`'s lines: one per provider, checked live, or one saying there is none. */
export async function checkMemoryProviders(config: MemoryProvidersConfig): Promise<DoctorLine[]> {
  let providers: MemoryProvider[];
  try {
    providers = configuredProviders(config);
  } catch (err) {
    const fix = err instanceof ConfigError ? err.message.slice(err.message.indexOf("Fix: ") + 5) : undefined;
    return [{ ok: false, text: `memory providers: ${(err as Error).message.split(" Fix: ")[0]}`, fix }];
  }
  if (providers.length === 0)
    return [
      {
        ok: true,
        text: "memory providers: none (MEMORY.md and USER.md only)",
        fix: "set memory.providers.honcho or memory.providers.mem0 (or HONCHO_URL / MEM0_URL with their API keys) to add an external memory",
      },
    ];
  const signal = AbortSignal.timeout(20_000);
  const checks = await Promise.all(providers.map((p) => p.check(signal)));
  return checks.map((c) => ({
    ok: c.ok,
    text: `memory provider ${c.text}`,
    ...(c.ok
      ? {}
      : {
          fix: "check memory.providers.<name>.base_url and the key in the variable api_key_env names; until then turns run without it and exchanges wait in the backlog",
        }),
  }));
}

/** @throws ConfigError naming the variable when `read` needs a key it does not have */
function needKey(read: KeyRead, provider: string): void {
  if (read.apiKey || !read.keyRequired) return;
  const name = read.apiKeyEnv;
  throw new ConfigError(
    name,
    `memory.providers.${provider} is set but ${name} is not. Fix: add ${name}=<your ${provider} API key> to HERALD_HOME/.env or the gateway's environment, or remove memory.providers.${provider}.`,
  );
}
