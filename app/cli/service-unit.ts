/**
 * The systemd unit of `herald service`: what it runs (this Node and this Herald's CLI), where
 * (`WorkingDirectory`), with which environment (`HERALD_HOME`, `EnvironmentFile=HERALD_HOME/.env`), and
 * the restart policy. Pure text; `service.ts` writes it and runs systemctl.
 */
import { existsSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { delimiter, dirname, join } from "node:path";

export type ServiceScope = "user" | "system";

export interface UnitOptions {
  scope: ServiceScope;
  homeDir: string;
  /** The package's folder (holds package.json, dist/ and node_modules/). */
  packageRoot: string;
  /** @defaultValue process.execPath */
  nodePath?: string;
  /** The system unit's `User=`; none for a user unit. */
  user?: string | undefined;
}

/** The unit's file name. */
export const UNIT_NAME = "herald.service";

/** Where the unit goes: the user's systemd folder or /etc/systemd/system. */
export function unitDir(scope: ServiceScope, env: NodeJS.ProcessEnv = process.env): string {
  if (scope === "system") return "/etc/systemd/system";
  return join(env["XDG_CONFIG_HOME"] || join(homedir(), ".config"), "systemd", "user");
}

/** The command the service runs: the build's bundle (npm start's) when there is one, else the sources through tsx. */
export function execStart(packageRoot: string, nodePath = process.execPath): string {
  const built = join(packageRoot, "dist", "bundle", "cli.js");
  const flags = "--max-semi-space-size=2 --heap-growing-percent=50";
  if (existsSync(built) || !existsSync(join(packageRoot, "app", "cli.ts")))
    return `${quote(nodePath)} ${flags} ${quote(built)} gateway`;
  return `${quote(nodePath)} ${flags} --import tsx ${quote(join(packageRoot, "app", "cli.ts"))} gateway`;
}

/** The unit file's text. */
export function unitText(options: UnitOptions): string {
  const node = options.nodePath ?? process.execPath;
  const lines = [
    "# Written by `herald service install`; `herald service uninstall` removes it.",
    "[Unit]",
    "Description=Herald AI assistant gateway",
    "Wants=network-online.target",
    "After=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    ...(options.scope === "system" && options.user ? [`User=${options.user}`] : []),
    `WorkingDirectory=${options.packageRoot}`,
    `Environment=HERALD_HOME=${options.homeDir}`,
    // The node binary's folder first, so a version manager's node is the one found by child processes.
    `Environment=PATH=${[...new Set([dirname(node), "/usr/local/bin", "/usr/bin", "/bin"])].join(delimiter)}`,
    // JSON lines to the journal; the rotated file under HERALD_HOME/logs is written as well.
    "Environment=HERALD_LOG_FORMAT=json",
    `EnvironmentFile=-${join(options.homeDir, ".env")}`,
    `ExecStart=${execStart(options.packageRoot, node)}`,
    "Restart=on-failure",
    "RestartSec=5",
    "TimeoutStopSec=30",
    "",
    "[Install]",
    `WantedBy=${options.scope === "system" ? "multi-user.target" : "default.target"}`,
    "",
  ];
  return lines.join("\n");
}

/** The user a system unit runs as: whoever ran sudo, else the current user unless root. */
export function serviceUser(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env["SUDO_USER"]) return env["SUDO_USER"];
  const name = userInfo().username;
  return name === "root" ? undefined : name;
}

function quote(path: string): string {
  return /\s/.test(path) ? `"${path}"` : path;
}
