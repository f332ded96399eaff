/**
 * How config values are read: snake_case config.yaml keys to camelCase, env strings to typed values,
 * dotted paths set into the raw config. The config loader and the platform accounts' reader share them.
 */
import { ConfigError } from "../core/errors.js";
import type { EnvKind } from "../core/settings.js";

/** `bot_token` → `botToken`. */
export const snakeToCamel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
/** `botToken` → `bot_token`. */
export const camelToSnake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every key of a parsed YAML value camelCased, at every depth. */
export function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeToCamel(k), camelKeys(v)]));
  }
  return value;
}

/** An env variable's text as its kind reads it. @throws ConfigError naming the variable and the fix */
export function coerce(envName: string, raw: string, kind: EnvKind): unknown {
  const value = raw.trim();
  switch (kind) {
    case "string":
    case "url":
      return value;
    case "list":
      return value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    case "int": {
      if (!/^-?\d+$/.test(value)) {
        throw new ConfigError(
          envName,
          `${envName} must be a whole number, got '${value}'. Fix: set ${envName}=<number>.`,
        );
      }
      return Number(value);
    }
    case "bool": {
      const v = value.toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off"].includes(v)) return false;
      throw new ConfigError(
        envName,
        `${envName} must be true or false, got '${value}'. Fix: set ${envName}=true or false.`,
      );
    }
  }
}

/** Sets `snakePath` (`telegram.bot_token`) in `target`, making the objects on the way. */
export function setPath(target: Record<string, unknown>, snakePath: string, value: unknown): void {
  const parts = snakePath.split(".").map(snakeToCamel);
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!next || typeof next !== "object" || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}
