/**
 * `herald service` as an operator runs it: `--dry-run` prints the unit; `install` writes it and runs
 * systemctl (a fake one on PATH records the calls); `status` and `uninstall` follow; with no systemctl
 * the commands to run are printed instead.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A temp folder with HERALD_HOME, a unit folder and a bin/ holding a systemctl that records its calls. */
function setup(withSystemctl: boolean) {
  dir = mkdtempSync(join(tmpdir(), "herald-service-"));
  const home = join(dir, "home");
  const units = join(dir, "units");
  const bin = join(dir, "bin");
  const calls = join(dir, "calls.txt");
  mkdirSync(home);
  mkdirSync(bin);
  if (withSystemctl) {
    writeFileSync(
      join(bin, "systemctl"),
      `#!/bin/sh\necho "$*" >> ${calls}\ncase "$*" in *is-active*) echo active;; esac\nexit 0\n`,
    );
    chmodSync(join(bin, "systemctl"), 0o755);
  }
  const herald = (...args: string[]) => {
    const result = spawnSync(process.execPath, ["--import", "tsx", cli, "service", ...args], {
      cwd: root,
      encoding: "utf8",
      // Only our bin/ on PATH (node is run by its full path): no real systemctl is reachable.
      env: { HERALD_HOME: home, PATH: bin, HOME: dir },
    });
    return { out: result.stdout + result.stderr, code: result.status };
  };
  const recorded = () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n") : []);
  return { home, units, herald, recorded };
}

describe("herald service", () => {
  it("--dry-run prints the unit and changes nothing", () => {
    const { home, units, herald, recorded } = setup(true);
    const { out, code } = herald("install", "--user", "--unit-dir", units, "--dry-run");
    expect(code).toBe(0);
    expect(out).toContain(`# ${join(units, "herald.service")}`);
    expect(out).toContain("Restart=on-failure");
    expect(out).toContain(`EnvironmentFile=-${join(home, ".env")}`);
    expect(out).toContain(`Environment=HERALD_HOME=${home}`);
    expect(out).toContain(`WorkingDirectory=${root}`);
    expect(out).toMatch(new RegExp(`^ExecStart=${process.execPath} .*cli\\.(ts|js) gateway$`, "m"));
    expect(out).toContain("WantedBy=default.target");
    expect(existsSync(units)).toBe(false);
    expect(recorded()).toEqual([]);
  });

  it("installs, reports status and uninstalls through systemctl", () => {
    const { units, herald, recorded } = setup(true);
    const install = herald("install", "--user", "--unit-dir", units);
    expect(install.code).toBe(0);
    const unit = readFileSync(join(units, "herald.service"), "utf8");
    expect(unit).toContain("[Service]");
    expect(unit).toContain("Restart=on-failure");
    expect(recorded()).toEqual(["--user daemon-reload", "--user enable --now herald.service"]);
    expect(install.out).toContain("loginctl enable-linger");

    const status = herald("status", "--user", "--unit-dir", units);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/Installed: .*herald\.service\n\s+runs: .* gateway\n\s+state: active/);

    const uninstall = herald("uninstall", "--user", "--unit-dir", units);
    expect(uninstall.code).toBe(0);
    expect(readdirSync(units)).toEqual([]);
    expect(recorded().slice(2)).toEqual([
      "--user is-active herald.service",
      "--user disable --now herald.service",
      "--user daemon-reload",
    ]);
    expect(herald("status", "--user", "--unit-dir", units).code).toBe(3);
  });

  it("prints the systemctl commands when systemctl is not there", () => {
    const { units, herald } = setup(false);
    const { out, code } = herald("install", "--system", "--unit-dir", units);
    expect(code).toBe(0);
    expect(readFileSync(join(units, "herald.service"), "utf8")).toContain("WantedBy=multi-user.target");
    expect(out).toMatch(
      /systemctl is not on PATH here; run:\n\s+systemctl daemon-reload\n\s+systemctl enable --now herald.service/,
    );
  });
});
