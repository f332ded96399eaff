/**
 * The `exec.cloud` and `exec.<provider>` options of the cloud sandbox backends and their checks (the
 * backends are built in cloud-factory.ts: the config reads these without loading them).
 */
import { z } from "zod";
import { ConfigError } from "../../core/errors.js";
import type { CloudProviderName } from "./cloud-types.js";

const text = z.string().min(1);
const price = z.number().nonnegative();

/** `exec.cloud`: what every cloud backend shares. */
export const cloudOptionsSchema = z
  .object({
    /** Pause a sandbox after this long without use, seconds. @defaultValue 600 */
    idleStopS: z.number().int().min(10).default(600),
    /** The workspace folder inside the sandbox; `{workspace}` is the workspace's folder name. */
    workdir: text.optional(),
  })
  .prefault({});

/** `exec.daytona`. */
export const daytonaOptionsSchema = z.object({
  apiKey: text.optional(),
  apiUrl: z.url().optional(),
  target: text.optional(),
  snapshot: text.optional(),
  costPerHour: price.optional(),
});

/** `exec.e2b`. */
export const e2bOptionsSchema = z.object({
  apiKey: text.optional(),
  domain: text.optional(),
  apiUrl: z.url().optional(),
  sandboxUrl: z.url().optional(),
  template: text.optional(),
  costPerHour: price.optional(),
});

/** `exec.modal`. */
export const modalOptionsSchema = z.object({
  tokenId: text.optional(),
  tokenSecret: text.optional(),
  appName: text.default("herald"),
  image: text.default("debian:bookworm-slim"),
  serverUrl: z.url().optional(),
  costPerHour: price.optional(),
});

/** `exec.vercel`. */
export const vercelOptionsSchema = z.object({
  token: text.optional(),
  teamId: text.optional(),
  projectId: text.optional(),
  apiUrl: z.url().optional(),
  runtime: text.optional(),
  costPerHour: price.optional(),
});

/** The options a cloud backend reads. */
export interface CloudExecOptions {
  cloud: z.output<typeof cloudOptionsSchema>;
  daytona?: z.output<typeof daytonaOptionsSchema> | undefined;
  e2b?: z.output<typeof e2bOptionsSchema> | undefined;
  modal?: z.output<typeof modalOptionsSchema> | undefined;
  vercel?: z.output<typeof vercelOptionsSchema> | undefined;
}

/** Where a provider's sandbox keeps the workspace unless `exec.cloud.workdir` says. */
export const DEFAULT_WORKDIRS: Record<CloudProviderName, string> = {
  daytona: "/home/daytona/workspace",
  e2b: "/home/user/workspace",
  modal: "/workspace",
  vercel: "/vercel/sandbox/workspace",
};

/** The env names of each provider's required keys, for messages. */
const REQUIRED: Record<CloudProviderName, [key: string, env: string][]> = {
  daytona: [["apiKey", "DAYTONA_API_KEY"]],
  e2b: [["apiKey", "E2B_API_KEY"]],
  modal: [
    ["tokenId", "MODAL_TOKEN_ID"],
    ["tokenSecret", "MODAL_TOKEN_SECRET"],
  ],
  vercel: [
    ["token", "VERCEL_TOKEN"],
    ["teamId", "VERCEL_TEAM_ID"],
    ["projectId", "VERCEL_PROJECT_ID"],
  ],
};

const SNAKE = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Throws `ConfigError` naming the first key `provider` needs and lacks (and its env name). */
export function checkCloudKeys(
  provider: CloudProviderName,
  section: Record<string, unknown> | undefined,
): void {
  for (const [key, env] of REQUIRED[provider]) {
    if (section?.[key] === undefined) {
      throw new ConfigError(
        `exec.${provider}.${SNAKE(key)}`,
        `exec.backend is "${provider}" but exec.${provider}.${SNAKE(key)} is not set: set ${env} in .env (or exec.${provider}.${SNAKE(key)} in config.yaml)`,
      );
    }
  }
}
