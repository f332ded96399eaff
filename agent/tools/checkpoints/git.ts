/**
 * The shadow repository and the `git` commands run on it. Git sees only what this file gives it: no
 * system or user configuration, no inherited environment (the gateway's secrets stay out), the
 * repository's own configuration written here (no hooks, no fsmonitor, links as links, no line-ending
 * or filter conversion whatever a `.gitattributes` in the workspace says).
 */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HeraldError } from "../../../core/errors.js";

const CONFIG = `[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tautocrlf = false
\tfsmonitor = false
\thooksPath = /dev/null
\tprotectNTFS = false
\tprotectHFS = false
\tquotePath = false
[gc]
\tauto = 0
[diff]
\trenames = false
`;

/** Attributes that outrank any `.gitattributes` of the workspace: bytes are restored as stored. */
const ATTRIBUTES = "* -text -ident -filter -working-tree-encoding\n";

/** Creates the shadow repository at `gitDir` when missing (idempotent). */
export async function initShadowRepo(gitDir: string): Promise<void> {
  await mkdir(join(gitDir, "objects"), { recursive: true, mode: 0o700 });
  await mkdir(join(gitDir, "refs", "checkpoints"), { recursive: true, mode: 0o700 });
  await mkdir(join(gitDir, "refs", "heads"), { recursive: true, mode: 0o700 });
  await mkdir(join(gitDir, "info"), { recursive: true, mode: 0o700 });
  await writeFile(join(gitDir, "HEAD"), "ref: refs/heads/main\n", { flag: "wx" }).catch(ignoreExists);
  await writeFile(join(gitDir, "config"), CONFIG, { flag: "wx" }).catch(ignoreExists);
  await writeFile(join(gitDir, "info", "attributes"), ATTRIBUTES, { flag: "wx" }).catch(ignoreExists);
}

function ignoreExists(err: NodeJS.ErrnoException): void {
  if (err.code !== "EEXIST") throw err;
}

/** How to run one git command. */
export interface GitRun {
  readonly gitDir: string;
  /** The folder git checks files out into: the workspace (restores only). */
  readonly checkout?: string | undefined;
  /** An index of its own (restores only). */
  readonly indexFile?: string | undefined;
  /** Characters of stdout kept; past them git is stopped and `cut` is true. @defaultValue 1_000_000 */
  readonly maxChars?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** What a git command printed. */
export interface GitOutput {
  readonly stdout: string;
  /** True when stdout was longer than `maxChars` (the rest was not read). */
  readonly cut: boolean;
}

/**
 * Runs `git args` on the shadow repository.
 * @throws HeraldError `tool_error` with git's message when it fails (not when it was cut).
 */
export function git(args: readonly string[], run: GitRun): Promise<GitOutput> {
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: run.gitDir,
    LC_ALL: "C",
    GIT_DIR: run.gitDir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
  };
  if (run.checkout) env["GIT_WORK_TREE"] = run.checkout;
  if (run.indexFile) env["GIT_INDEX_FILE"] = run.indexFile;
  const maxChars = run.maxChars ?? 1_000_000;
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { env, cwd: run.checkout ?? run.gitDir, signal: run.signal });
    let stdout = "";
    let stderr = "";
    let cut = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (cut) return;
      stdout += chunk;
      if (stdout.length > maxChars) {
        cut = true;
        stdout = stdout.slice(0, maxChars);
        child.kill("SIGTERM");
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    child.on("error", (err) =>
      reject(
        new HeraldError(`git could not run: ${err.message}; install git`, { code: "tool_error", cause: err }),
      ),
    );
    child.on("close", (code) => {
      if (code === 0 || cut) resolve({ stdout, cut });
      else
        reject(
          new HeraldError(`git ${args[0]} failed: ${stderr.trim() || `exit ${code}`}`, {
            code: "tool_error",
          }),
        );
    });
  });
}
