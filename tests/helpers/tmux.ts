/**
 * A real terminal for tests of `herald chat`: the built binary (`node dist/app/cli.js`) in a tmux pane
 * on a private tmux server, driven with `send-keys` and read with `capture-pane`. When the program
 * exits, its shell prints `[exited <status>]` and stays, so a test reads how it ended.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";

export const ROOT = join(import.meta.dirname, "..", "..");
export const CLI = join(ROOT, "dist", "app", "cli.js");
/** The bundle `npm start` runs (scripts/bundle.mjs): the same program as `CLI`, in a few files. */
export const BUNDLE = join(ROOT, "dist", "bundle", "cli.js");

/** One pane running a command. */
export interface Pane {
  /** Keys as tmux names them (`Enter`, `C-c`, `Up`, `PPage`) or literal text with `type`. */
  keys(...keys: string[]): void;
  /** Types `text` literally (no key names). */
  type(text: string): void;
  /** The screen as text (`escapes`: with its SGR sequences). */
  capture(options?: { escapes?: boolean }): string;
  /** Waits until the screen satisfies `check` (a substring or a predicate); returns that screen. */
  waitFor(check: string | ((screen: string) => boolean), timeoutMs?: number): Promise<string>;
  resize(columns: number, rows: number): void;
  /** Whether the program has exited, and its status. */
  exited(): { dead: boolean; status?: number | undefined };
  /** The program's process id. */
  pid(): number;
  /** Whether the pane shows the alternate screen (a full-screen program). */
  alternate(): boolean;
  kill(): void;
}

const socket = `herald-test-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
}

function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

let panes = 0;

/** Runs `args` (after `node`) in a new pane of `columns` × `rows` with exactly `env` added to PATH/HOME. */
export function startPane(
  args: string[],
  env: Record<string, string>,
  size: { columns: number; rows: number } = { columns: 80, rows: 24 },
): Pane {
  // A session of its own keeps the server up while a test's pane is killed and the next one starts.
  if (panes === 0) tmux("new-session", "-d", "-s", "keep", "exec sleep 86400");
  const name = `p${++panes}`;
  const vars = Object.entries({ TERM: "tmux-256color", LANG: "C.UTF-8", ...env }).map(
    ([k, v]) => `${k}=${quote(v)}`,
  );
  // Only what the test gives: no CI (Ink would draw only its last frame), no NO_COLOR from outside.
  const program = `env -i PATH=${quote(process.env["PATH"] ?? "")} HOME=${quote(process.env["HOME"] ?? "/tmp")} ${vars.join(" ")} ${quote(process.execPath)} ${args.map(quote).join(" ")}`;
  // The shell stays to say how the program ended.
  const command = `${program}; echo "[exited $?]"; exec sleep 3600`;
  tmux("new-session", "-d", "-s", name, "-x", String(size.columns), "-y", String(size.rows), command);
  const target = `${name}:0.0`;
  const pane: Pane = {
    keys: (...keys) => void tmux("send-keys", "-t", target, ...keys),
    type: (text) => void tmux("send-keys", "-t", target, "-l", text),
    capture: (options = {}) => tmux("capture-pane", "-p", ...(options.escapes ? ["-e"] : []), "-t", target),
    async waitFor(check, timeoutMs = 10_000) {
      const test = typeof check === "string" ? (s: string) => s.includes(check) : check;
      let screen = "";
      await expect
        .poll(
          () => {
            screen = pane.capture();
            return test(screen);
          },
          { timeout: timeoutMs, interval: 50, message: `screen never showed ${String(check)}` },
        )
        .toBe(true)
        .catch((err: unknown) => {
          throw new Error(
            `${err instanceof Error ? err.message : String(err)}\n--- last screen ---\n${screen}`,
          );
        });
      return screen;
    },
    resize: (columns, rows) =>
      void tmux("resize-window", "-t", name, "-x", String(columns), "-y", String(rows)),
    exited() {
      const match = /\[exited (\d+)\]/.exec(pane.capture());
      return match ? { dead: true, status: Number(match[1]) } : { dead: false };
    },
    pid() {
      const shell = tmux("display-message", "-p", "-t", target, "#{pane_pid}").trim();
      const child = spawnSync("pgrep", ["-P", shell], { encoding: "utf8" }).stdout.trim().split("\n")[0];
      return Number(child || shell);
    },
    alternate: () => tmux("display-message", "-p", "-t", target, "#{alternate_on}").trim() === "1",
    kill: () => {
      spawnSync("tmux", ["-L", socket, "kill-session", "-t", name]);
    },
  };
  return pane;
}

/** Ends this file's tmux server (every pane it started). */
export function stopTmux(): void {
  spawnSync("tmux", ["-L", socket, "kill-server"]);
}

/** The SGR parameters on a captured screen that set a colour (tmux's own 39/49 resets are not colours). */
export function colourCodes(screen: string): string[] {
  const found: string[] = [];
  for (const match of screen.matchAll(/\x1b\[([0-9;:]*)m/g)) {
    const params = match[1]!.split(/[;:]/).map(Number);
    for (let i = 0; i < params.length; i++) {
      const p = params[i]!;
      if (p === 38 || p === 48) found.push(match[0]);
      if ((p >= 30 && p <= 37) || (p >= 40 && p <= 47) || (p >= 90 && p <= 97) || (p >= 100 && p <= 107))
        found.push(match[0]);
    }
  }
  return found;
}

const SOURCES = [
  "core",
  "app",
  "gateway",
  "adapters",
  "agent",
  "sessions",
  "scheduler",
  "skills",
  "tests/fakes",
];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds `dist/` and the bundle when either is missing or older than a source file (`npm run build`),
 * one test file at a time (a lock folder), so the binary under test is the code under test.
 */
export async function ensureBuilt(): Promise<void> {
  const lock = join(ROOT, "dist.build-lock");
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock left by a killed run is stale after five minutes.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 300_000)
        rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    const newest = Math.max(...SOURCES.map((s) => newestSource(join(ROOT, s))));
    if ([CLI, BUNDLE].some((f) => !existsSync(f) || statSync(f).mtimeMs < newest))
      execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
