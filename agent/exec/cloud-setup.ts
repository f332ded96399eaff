/**
 * The cloud providers' part of `herald setup`'s exec step: the provider's keys (kept in `.env` under
 * their documented names), checked live with one authenticated call through the provider's SDK before
 * anything is written.
 */
import { CheckFailed, type SetupFlag, type StepContext } from "../../core/setup.js";
import { checked, secret, tryAgain } from "../../core/setup-steps.js";
import type { CloudProviderName } from "./cloud-types.js";

/** Each provider's keys: the config key under `exec.<provider>`, its env name, the question. */
const KEYS: Record<CloudProviderName, readonly [key: string, env: string, message: string][]> = {
  daytona: [["apiKey", "DAYTONA_API_KEY", "Daytona API key (app.daytona.io → Keys)"]],
  e2b: [["apiKey", "E2B_API_KEY", "E2B API key (e2b.dev → Dashboard → API Keys)"]],
  modal: [
    ["tokenId", "MODAL_TOKEN_ID", "Modal token id (ak-…)"],
    ["tokenSecret", "MODAL_TOKEN_SECRET", "Modal token secret (as-…)"],
  ],
  vercel: [
    ["token", "VERCEL_TOKEN", "Vercel access token"],
    ["teamId", "VERCEL_TEAM_ID", "Vercel team id (team_…)"],
    ["projectId", "VERCEL_PROJECT_ID", "Vercel project id (prj_…)"],
  ],
};

/** Addresses read from the environment for the live check (self-hosted, proxies). */
const ADDRESSES: Record<CloudProviderName, readonly [key: string, env: string][]> = {
  daytona: [["apiUrl", "DAYTONA_API_URL"]],
  e2b: [
    ["domain", "E2B_DOMAIN"],
    ["apiUrl", "E2B_API_URL"],
    ["sandboxUrl", "E2B_SANDBOX_URL"],
  ],
  modal: [["serverUrl", "MODAL_SERVER_URL"]],
  vercel: [["apiUrl", "VERCEL_SANDBOX_API_URL"]],
};

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const flagOf = (provider: string, key: string, env: string): SetupFlag => ({
  flag: `--${provider}-${snake(key).replaceAll("_", "-")} <value>`,
  key: `exec.${provider}.${snake(key)}`,
  env,
  help: `${env} for exec.backend ${provider}`,
});

/** The flags of the providers' keys and addresses (`--daytona-api-key`, …), each read from its env name too. */
export const cloudSetupFlags: readonly SetupFlag[] = (Object.keys(KEYS) as CloudProviderName[]).flatMap(
  (p) => [
    ...KEYS[p].map(([key, env]) => flagOf(p, key, env)),
    ...ADDRESSES[p].map(([key, env]) => flagOf(p, key, env)),
  ],
);

/** The provider's addresses (advanced: self-hosted, proxies): given, or config.yaml's, or none. */
async function askAddresses(ctx: StepContext, provider: CloudProviderName): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, env] of ADDRESSES[provider]) {
    const path = `exec.${provider}.${snake(key)}`;
    const current = (ctx.files.get(path) as string | undefined) ?? ctx.files.env(env);
    const given = await ctx.p.text({
      key: path,
      message: `${env} (empty: the provider's)`,
      initial: current,
      advanced: true,
    });
    if (given) out[key] = given;
  }
  return out;
}

/** The live check: one authenticated call through the SDK. @throws CheckFailed with the reason */
async function checkKeys(provider: CloudProviderName, section: Record<string, string>): Promise<string> {
  const { createCloudExecBackend } = await import("./cloud-factory.js");
  const backend = createCloudExecBackend(
    provider,
    { cloud: { idleStopS: 600 }, [provider]: section },
    undefined,
  );
  try {
    const availability = await backend.checkAvailable();
    if (!availability.available) throw new CheckFailed(`${availability.missing}; ${availability.fix}`);
    return `the ${provider} API accepted the key`;
  } finally {
    await backend.close();
  }
}

/** Asks `provider`'s keys, checks them live and records them; returns false when skipped. */
export async function cloudSetupStep(ctx: StepContext, provider: CloudProviderName): Promise<boolean> {
  for (;;) {
    const section: Record<string, string> = {};
    const fresh: [string, string][] = [];
    for (const [key, env, message] of KEYS[provider]) {
      const answer = await secret(ctx, `exec.${provider}.${snake(key)}`, env, message);
      if (!answer.value) {
        ctx.p.say("warn", `${provider} skipped: ${env} not given.`);
        return false;
      }
      section[key] = answer.value;
      if (answer.isNew) fresh.push([env, answer.value]);
    }
    const addresses = await askAddresses(ctx, provider);
    Object.assign(section, addresses);
    const ok = await checked(
      ctx,
      `Checking the ${provider} key`,
      () => checkKeys(provider, section),
      (s) => s,
    );
    if (ok) {
      for (const [env, value] of fresh) ctx.files.setEnv(env, value);
      for (const [key, value] of Object.entries(addresses))
        ctx.files.set(`exec.${provider}.${snake(key)}`, value);
      return true;
    }
    if (!(await tryAgain(ctx, `${provider} key`))) return false;
  }
}
