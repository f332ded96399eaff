/** Reads each webhook route's secret from its env variable at load time. */
import { ConfigError } from "../../core/errors.js";
import type { ResolvedWebhook, WebhookConfig } from "./types.js";

/**
 * The routes with their secrets (the environment, then HERALD_HOME/.env).
 * @throws ConfigError naming the route's key when a name repeats or a secret's variable is unset.
 */
export function resolveWebhooks(
  routes: readonly WebhookConfig[],
  env: Readonly<Record<string, string | undefined>>,
): ResolvedWebhook[] {
  const seen = new Set<string>();
  return routes.map((route, i) => {
    if (seen.has(route.name)) {
      throw new ConfigError(
        `webhooks.${i}.name`,
        `config.yaml: webhooks has two entries named '${route.name}'. Fix: give each webhook its own name.`,
      );
    }
    seen.add(route.name);
    const variable = route.auth.type === "hmac" ? route.auth.secretEnv : route.auth.tokenEnv;
    const key = route.auth.type === "hmac" ? "secret_env" : "token_env";
    const secret = env[variable]?.trim();
    if (!secret || secret.length < 16) {
      throw new ConfigError(
        variable,
        `Webhook '${route.name}' reads its ${route.auth.type === "hmac" ? "secret" : "token"} from ${variable} (config.yaml: webhooks.${i}.auth.${key}), which is ${secret ? "shorter than 16 characters" : "not set"}. Fix: add ${variable}=<a long random string> to HERALD_HOME/.env or the environment.`,
      );
    }
    return { ...route, secret };
  });
}
