/**
 * The `/usage` line of a session's cloud sandbox: how long its sandboxes ran (from the record beside
 * the workspaces, `cloud-records.ts`, so the gateway reads what workers sharing HERALD_HOME recorded)
 * and, with `exec.<provider>.cost_per_hour` set, what that cost. No provider's API reports a price.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type SandboxRecord, sandboxHours, sandboxRecordPath } from "./cloud-records.js";
import { workspaceDirName } from "./workspaces.js";

/** Options of `sandboxUsageLine`. */
export interface SandboxUsageOptions {
  /** `HERALD_HOME/workspaces`. */
  readonly workspacesDir: string;
  /** The configured backend's name. */
  readonly provider: string;
  /** USD per sandbox hour, when configured. */
  readonly costPerHour: number | undefined;
}

/**
 * The line for the session key's sandbox, or undefined when it has none (another backend, or no
 * command ran yet). Synchronous: `/usage` answers at once.
 */
export function sandboxUsageLine(options: SandboxUsageOptions, sessionKey: string): string | undefined {
  const dir = join(options.workspacesDir, workspaceDirName(sessionKey));
  let record: SandboxRecord;
  try {
    record = JSON.parse(readFileSync(sandboxRecordPath(dir), "utf8")) as SandboxRecord;
  } catch {
    return undefined;
  }
  if (record.provider !== options.provider) return undefined;
  const hours = sandboxHours(record);
  const state = record.runningSince === undefined ? "paused" : "running";
  const shown = hours < 0.1 ? `${Math.round(hours * 60)} min` : `${hours.toFixed(2)} h`;
  const cost =
    options.costPerHour === undefined
      ? `no price configured (exec.${options.provider}.cost_per_hour)`
      : `$${(hours * options.costPerHour).toFixed(hours * options.costPerHour < 0.01 ? 4 : 2)} at $${options.costPerHour}/h`;
  return `• ${options.provider} sandbox (${state} now): ${shown} running — ${cost}`;
}

/** The settings `sandboxUsage` reads (`HeraldConfig` has this shape). */
export interface SandboxUsageSettings {
  homeDir: string;
  exec: { backend: string } & Partial<
    Record<"daytona" | "e2b" | "modal" | "vercel", { costPerHour?: number | undefined } | undefined>
  >;
}

/** `/usage`'s extra line for a session key where the backend is a cloud sandbox; else undefined. */
export function sandboxUsage(
  config: SandboxUsageSettings,
): ((sessionKey: string) => string | undefined) | undefined {
  const provider = config.exec.backend;
  if (provider !== "daytona" && provider !== "e2b" && provider !== "modal" && provider !== "vercel")
    return undefined;
  const options = {
    workspacesDir: join(config.homeDir, "workspaces"),
    provider,
    costPerHour: config.exec[provider]?.costPerHour,
  };
  return (sessionKey) => sandboxUsageLine(options, sessionKey);
}
