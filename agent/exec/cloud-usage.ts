/**
 * The `/usage` line of a session's cloud sandbox: how long its sandboxes ran (from the record beside
 * the workspaces, `cloud-records.ts`, so the gateway reads what workers sharing HERALD_HOME recorded)
 * and, with `exec.<provider>.cost_per_hour` set, what that cost. No provider's API reports a price.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { agentOfKey } from "../../core/chat.js";
import { type SandboxRecord, sandboxHours, sandboxRecordPath } from "./cloud-records.js";
import { type WorkspaceRootSettings, workspaceDirName, workspaceRoots } from "./workspaces.js";

/** Options of `sandboxUsageLine`. */
export interface SandboxUsageOptions {
  /** The root of the session's workspace (`HERALD_HOME/workspaces` for the default agent). */
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
export interface SandboxUsageSettings extends WorkspaceRootSettings {
  agents: readonly { name: string; workspaceRoot?: string | undefined; execBackend?: string | undefined }[];
  exec: { backend: string } & Partial<Record<CloudName, { costPerHour?: number | undefined } | undefined>>;
}

type CloudName = "daytona" | "e2b" | "modal" | "vercel";
const CLOUDS: readonly string[] = ["daytona", "e2b", "modal", "vercel"];

/**
 * `/usage`'s extra line for a session key whose agent's backend (`agents[].exec_backend`, else
 * `exec.backend`) is a cloud sandbox; else undefined. Undefined when no agent has one.
 */
export function sandboxUsage(
  config: SandboxUsageSettings,
): ((sessionKey: string) => string | undefined) | undefined {
  const backends = new Map(config.agents.map((a) => [a.name, a.execBackend ?? config.exec.backend]));
  if (![config.exec.backend, ...backends.values()].some((b) => CLOUDS.includes(b))) return undefined;
  const { rootDir, agentRoots } = workspaceRoots(config);
  return (sessionKey) => {
    const agent = agentOfKey(sessionKey);
    const provider = (agent && backends.get(agent)) || config.exec.backend;
    if (!CLOUDS.includes(provider)) return undefined;
    const options = {
      workspacesDir: (agent && agentRoots.get(agent)) || rootDir,
      provider,
      costPerHour: config.exec[provider as CloudName]?.costPerHour,
    };
    return sandboxUsageLine(options, sessionKey);
  };
}
