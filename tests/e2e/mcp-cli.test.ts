/**
 * `herald mcp list`, `herald mcp test <name>` and the doctor's MCP lines, run as the user runs them (the
 * CLI in a child process) against server-everything over stdio and a server that cannot start.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";

const cli = join(import.meta.dirname, "..", "..", "app", "cli.ts");
let home: string;

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), "herald-mcp-cli-"));
  const node = JSON.stringify(process.execPath);
  writeFileSync(
    join(home, "config.yaml"),
    [
      "mcp_servers:",
      "  everything:",
      `    command: ${node}`,
      `    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]`,
      "    env:",
      "      SECRET_FOR_SERVER: do-not-print-me",
      "    tools:",
      "      include: [echo, get-tiny-image, get-structured-content]",
      "  broken:",
      `    command: ${node}`,
      `    args: ["-e", "process.exit(3)"]`,
      "    timeout_s: 5",
      "",
    ].join("\n"),
  );
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

function herald(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", cli, ...args],
      { env: { ...process.env, HERALD_HOME: home, HERALD_LOG_LEVEL: "silent" }, encoding: "utf8" },
      (err, stdout, stderr) => resolve({ status: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

describe("herald mcp", () => {
  it("list: each server's state and tools; a broken server fails the command", async () => {
    const { status, stdout } = await herald("mcp", "list");
    expect(stdout).toContain("everything: connected");
    expect(stdout).toContain("  - echo: Echoes back the input string");
    expect(stdout).not.toContain("get-env");
    expect(stdout).toMatch(/broken: retrying \(.+\)/);
    expect(stdout).not.toContain("do-not-print-me");
    expect(status).toBe(1);
  });

  it("test <name>: connects, lists, calls a read-only tool without arguments, with timings", async () => {
    const { status, stdout } = await herald("mcp", "test", "everything");
    expect(stdout).toMatch(/✓ connected \(stdio\) and listed 3 tools in \d+ ms/);
    expect(stdout).toMatch(/✓ called get-tiny-image in \d+ ms:\n[^\n]*\n\[image image\/png, \d+ bytes\]/);
    expect(status).toBe(0);
  });

  it("test <name> --tool --args calls the named tool", async () => {
    const { stdout } = await herald(
      "mcp",
      "test",
      "everything",
      "--tool",
      "echo",
      "--args",
      '{"message":"hi"}',
    );
    expect(stdout).toMatch(/✓ called echo in \d+ ms:\nEcho: hi/);
  });

  it("test of a server that cannot start says why, with exit code 1", async () => {
    const { status, stdout } = await herald("mcp", "test", "broken");
    expect(stdout).toMatch(/✗ did not connect after \d+ ms: .+/);
    expect(status).toBe(1);
  });

  it("test of an unknown name lists the configured ones", async () => {
    const { status, stderr } = await herald("mcp", "test", "nope");
    expect(stderr).toContain(
      "There is no MCP server 'nope' in mcp_servers: (configured: everything, broken)",
    );
    expect(status).toBe(1);
  });

  it("doctor has a line per server", async () => {
    const { stdout } = await herald("doctor");
    expect(stdout).toMatch(/MCP everything: connected \(stdio\), 3 tools, \d+ ms/);
    expect(stdout).toMatch(/MCP broken: not connected \(stdio\): .+/);
    expect(stdout).toContain("herald mcp test broken");
  });
});
