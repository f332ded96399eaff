/**
 * Making a workspace copy equal to a manifest, through the backend (where the workspace's commands run,
 * as their user): paths removed and folders made by one shell script run like a command, files written
 * with `WorkspaceFiles.write` (which refuses a path whose real location is outside the workspace),
 * links made and modes set by a second script. Nothing here opens a workspace path on this host, so a
 * link a command planted cannot steer a pulled file out of the workspace.
 */
import { shellQuote } from "../child.js";
import { runCommand } from "../run.js";
import type { ExecutionBackend, Workspace } from "../types.js";
import { sameEntry } from "./check.js";
import type { LocalRecord } from "./record.js";
import type { ScannedEntry } from "./scan.js";
import type { FileEntry, Manifest, ManifestEntry } from "./types.js";

/** What a pull does to the copy. */
export interface PullPlan {
  /** Paths removed first (`rm -rf`): gone from the manifest, or of another kind there. */
  readonly remove: string[];
  /** Folders made (`mkdir -p`). */
  readonly dirs: string[];
  /** Files written, with their blobs. */
  readonly files: [string, FileEntry][];
  /** Links made (`ln -s`). */
  readonly links: [string, string][];
  /** Modes set (`chmod`) on folders and on files that stay but changed mode. */
  readonly modes: [string, number][];
}

/** True when the copy's `local` already is `remote` (a file by the record's hash of an unchanged file). */
function holds(
  local: ScannedEntry | undefined,
  remote: ManifestEntry,
  known: LocalRecord["entries"][string] | undefined,
): boolean {
  if (!local || local.kind !== remote.kind) return false;
  if (local.kind === "link") return remote.kind === "link" && local.target === remote.target;
  if (local.kind === "dir") return true;
  return (
    remote.kind === "file" &&
    known !== undefined &&
    sameEntry(known.entry, {
      ...remote,
      mode: known.entry.kind === "file" ? known.entry.mode : remote.mode,
    }) &&
    known.sizeBytes === local.sizeBytes &&
    known.mtimeMs === local.mtimeMs
  );
}

/**
 * The steps that make the copy (`scan`, last synced as `record`) equal to `manifest`. A path the copy
 * holds that neither the record nor the manifest names (a background process's output since) is left.
 */
export function planPull(
  manifest: Manifest,
  scan: Map<string, ScannedEntry>,
  record: LocalRecord | undefined,
): PullPlan {
  const plan: PullPlan = { remove: [], dirs: [], files: [], links: [], modes: [] };
  for (const path of Object.keys(record?.entries ?? {}))
    if (!(path in manifest) && scan.has(path)) plan.remove.push(path);
  for (const [path, entry] of Object.entries(manifest)) {
    const local = scan.get(path);
    if (holds(local, entry, record?.entries[path])) {
      if (entry.kind !== "link" && local?.kind !== "link" && local?.mode !== entry.mode)
        plan.modes.push([path, entry.mode]);
      continue;
    }
    if (local && (local.kind !== entry.kind || entry.kind === "link")) plan.remove.push(path);
    if (entry.kind === "dir") {
      plan.dirs.push(path);
      plan.modes.push([path, entry.mode]);
    } else if (entry.kind === "file") plan.files.push([path, entry]);
    else plan.links.push([path, entry.target]);
  }
  return plan;
}

/**
 * Runs shell lines in the workspace as its commands run (the script on stdin, so its length is not
 * bounded by an argument's); a line that fails stops it.
 * @throws Error naming the failure (with the script's stderr).
 */
export async function runLines(
  backend: ExecutionBackend,
  workspace: Workspace,
  lines: string[],
  signal?: AbortSignal,
): Promise<void> {
  if (lines.length === 0) return;
  const result = await runCommand(backend, workspace, {
    command: "/bin/sh -e -s",
    stdin: `${lines.join("\n")}\n`,
    timeoutMs: 120_000,
    ...(signal ? { signal } : {}),
  });
  if (result.exitCode !== 0)
    throw new Error(
      `the workspace could not be updated (exit ${result.exitCode ?? result.signal}): ${result.stderr.slice(0, 500)}`,
    );
}

/** The first script: removals, then folders. */
export function prepareLines(plan: PullPlan): string[] {
  return [
    ...plan.remove.map((p) => `rm -rf -- ${shellQuote(p)}`),
    ...plan.dirs.map((p) => `mkdir -p -- ${shellQuote(p)}`),
  ];
}

/** The second script: links, then modes (folders after what is inside them). */
export function finishLines(plan: PullPlan): string[] {
  return [
    ...plan.links.map(([p, target]) => `ln -s -- ${shellQuote(target)} ${shellQuote(p)}`),
    ...plan.modes.map(([p, mode]) => `chmod ${(mode & 0o7777).toString(8)} -- ${shellQuote(p)}`).reverse(),
  ];
}
