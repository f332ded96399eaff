/**
 * `herald setup --non-interactive` run as its own process (the CLI from source through tsx), each run
 * in a fresh `HERALD_HOME` removed after the test file.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");

/** What one run printed (stdout and stderr together), how it exited, and the home it wrote. */
export interface SetupRun {
  code: number | null;
  out: string;
  home: string;
}

/**
 * Returns a function that runs `herald setup --non-interactive --skip-doctor …args` in a new home
 * (named `herald-setup-<prefix>-…`); registers an `afterAll` in the calling file that removes them.
 */
export function nonInteractiveSetup(prefix: string): (args: string[]) => Promise<SetupRun> {
  const homes: string[] = [];
  afterAll(() => {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });
  return (args) => {
    const home = mkdtempSync(join(tmpdir(), `herald-setup-${prefix}-`));
    homes.push(home);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", cli, "setup", "--non-interactive", "--skip-doctor", ...args],
      {
        cwd: root,
        env: { HERALD_HOME: home, PATH: process.env["PATH"] ?? "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    const collect = (d: Buffer) => {
      out += d.toString();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out, home })));
  };
}
