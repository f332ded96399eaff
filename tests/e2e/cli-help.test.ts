/**
 * `herald` loads only the module of the command it runs (app/cli.ts): help must still list every
 * command, a group's help its subcommands (`mcp serve` from its own module included), and
 * `--version` answer without any group loaded.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");
const home = mkdtempSync(join(tmpdir(), "herald-cli-help-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function herald(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", cli, ...args], {
    env: { ...process.env, HERALD_HOME: home },
    cwd: root,
  });
  return stdout;
}

const GROUPS = [
  "gateway",
  "worker",
  "doctor",
  "chat",
  "sessions",
  "usage",
  "pairing",
  "whatsapp",
  "skills",
  "cron",
  "tasks",
  "logs",
  "service",
  "mcp",
  "setup",
  "plugins",
];

describe("herald's help", () => {
  it("lists every command", async () => {
    const help = await herald("--help");
    for (const group of GROUPS) expect(help).toMatch(new RegExp(`^  ${group}\\b`, "m"));
  });

  it("lists a group's subcommands, `mcp serve` among the `mcp` ones", async () => {
    const help = await herald("mcp", "--help");
    for (const sub of ["list", "test", "serve"]) expect(help).toMatch(new RegExp(`^  ${sub}\\b`, "m"));
    expect(await herald("help", "sessions")).toMatch(/^ {2}prune\b/m);
  });

  it("prints the version", async () => {
    expect((await herald("--version")).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
