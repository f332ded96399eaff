/**
 * `herald service install|uninstall|status [--user|--system] [--dry-run]`: a systemd unit for the
 * gateway, enabled and started with systemctl when it is on PATH, else the commands to run are printed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { Command } from "commander";
import { moduleDir } from "../../core/module-dir.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";
import { type ServiceScope, serviceUser, UNIT_NAME, unitDir, unitText } from "./service-unit.js";

interface ServiceOptions {
  user?: boolean;
  system?: boolean;
  dryRun?: boolean;
  unitDir?: string;
}

/** The package's folder: app/ (sources) or dist/app/ (build) are below it. */
function packageRoot(): string {
  const here = dirname(moduleDir(import.meta.url, "app/cli"));
  const up = (n: number) => join(here, ...Array<string>(n).fill(".."));
  return existsSync(join(up(1), "package.json")) ? up(1) : up(2);
}

function findSystemctl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    const candidate = join(dir, "systemctl");
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

function scopeOf(opts: ServiceOptions): ServiceScope {
  if (opts.user && opts.system) throw new Error("Choose one of --user and --system.");
  if (opts.system) return "system";
  if (opts.user) return "user";
  return process.getuid?.() === 0 ? "system" : "user";
}

/** Runs systemctl (or says what to run); returns false when a call failed. */
function systemctl(scope: ServiceScope, args: string[], out: NodeJS.WritableStream): boolean {
  const full = [...(scope === "user" ? ["--user"] : []), ...args];
  const bin = findSystemctl();
  if (!bin) {
    out.write(`  systemctl ${full.join(" ")}\n`);
    return true;
  }
  const result = spawnSync(bin, full, { stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) {
    out.write(`systemctl ${full.join(" ")} failed (exit ${result.status ?? result.signal}).\n`);
    return false;
  }
  return true;
}

/** Adds the `service` command group to the program. */
export function registerServiceCommands(program: Command): void {
  const service = program
    .command("service")
    .description("run the gateway as a systemd service (user unit by default, --system for root)");
  const common = (cmd: Command) =>
    cmd
      .option("--user", "a user unit (~/.config/systemd/user), the default unless run as root")
      .option("--system", "a system unit (/etc/systemd/system), needs root")
      .option("--unit-dir <dir>", "write the unit here instead of systemd's folder");
  common(service.command("install").description("write the unit, then enable and start it"))
    .option("--dry-run", "print the unit and the commands; change nothing")
    .action(cliAction(install));
  common(service.command("uninstall").description("stop and disable the unit, and remove it")).action(
    cliAction(uninstall),
  );
  common(
    service.command("status").description("whether the unit is installed, and systemctl's status"),
  ).action(cliAction(status));
}

/** `herald service install`: writes the unit, then enables and starts it. */
function install(opts: ServiceOptions): void {
  const scope = scopeOf(opts);
  const config = loadConfig();
  const text = unitText({
    scope,
    homeDir: config.homeDir,
    packageRoot: packageRoot(),
    user: scope === "system" ? serviceUser() : undefined,
  });
  const dir = opts.unitDir ?? unitDir(scope);
  const path = join(dir, UNIT_NAME);
  const out = process.stdout;
  if (opts.dryRun) {
    out.write(
      `# ${path}\n${text}\n# then: systemctl ${scope === "user" ? "--user " : ""}daemon-reload && systemctl ${scope === "user" ? "--user " : ""}enable --now ${UNIT_NAME}\n`,
    );
    return;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${path}.tmp`, text, { mode: 0o644 });
  renameSync(`${path}.tmp`, path);
  out.write(`Wrote ${path}.\n`);
  if (!findSystemctl()) out.write("systemctl is not on PATH here; run:\n");
  if (!systemctl(scope, ["daemon-reload"], out)) process.exitCode = 1;
  else if (!systemctl(scope, ["enable", "--now", UNIT_NAME], out)) process.exitCode = 1;
  else if (findSystemctl()) out.write(`Herald runs as ${UNIT_NAME}; \`herald logs -f\` follows it.\n`);
  if (scope === "user")
    out.write(
      `To keep it running after you log out: loginctl enable-linger ${process.env["USER"] ?? "$USER"}\n`,
    );
}

/** `herald service uninstall`: stops, disables and removes the unit. */
function uninstall(opts: ServiceOptions): void {
  const scope = scopeOf(opts);
  const path = join(opts.unitDir ?? unitDir(scope), UNIT_NAME);
  const out = process.stdout;
  if (!existsSync(path)) {
    out.write(`No unit at ${path}; nothing to remove.\n`);
    return;
  }
  if (!findSystemctl()) out.write("systemctl is not on PATH here; run:\n");
  systemctl(scope, ["disable", "--now", UNIT_NAME], out);
  rmSync(path, { force: true });
  systemctl(scope, ["daemon-reload"], out);
  out.write(`Removed ${path}.\n`);
}

/** `herald service status`: whether the unit is installed, and systemctl's state of it. */
function status(opts: ServiceOptions): void {
  const scope = scopeOf(opts);
  const path = join(opts.unitDir ?? unitDir(scope), UNIT_NAME);
  const out = process.stdout;
  if (!existsSync(path)) {
    out.write(`Not installed (no ${path}). \`herald service install\` writes it.\n`);
    process.exitCode = 3;
    return;
  }
  const exec = /^ExecStart=(.*)$/m.exec(readFileSync(path, "utf8"))?.[1];
  out.write(`Installed: ${path}\n  runs: ${exec ?? "?"}\n`);
  const bin = findSystemctl();
  if (!bin) {
    out.write("systemctl is not on PATH here; nothing more to ask.\n");
    return;
  }
  try {
    const active = execFileSync(bin, [...(scope === "user" ? ["--user"] : []), "is-active", UNIT_NAME], {
      encoding: "utf8",
    }).trim();
    out.write(`  state: ${active}\n`);
  } catch (err) {
    const stdout = (err as { stdout?: string }).stdout?.trim();
    out.write(`  state: ${stdout || "unknown"}\n`);
    process.exitCode = 3;
  }
}
