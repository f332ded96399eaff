/**
 * Shell scripts shared by the backends whose commands run out of our reach (`SshBackend`,
 * `DockerBackend`): killing the local client (ssh, docker exec) does not end the remote command, so the
 * command records its process group id in a pid file and a kill runs `kill -- -<pgid>` over there.
 */
import { randomBytes } from "node:crypto";
import { HeraldError } from "../../core/errors.js";
import { shellQuote } from "./child.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A fresh pid file path on the remote side. */
export function remotePidFile(dir = "/tmp"): string {
  return `${dir}/herald-${randomBytes(6).toString("hex")}.pid`;
}

/** Input of `remoteRunScript`. */
export interface RemoteRunInput {
  readonly pidFile: string;
  /** The workspace root on the remote side, absolute or relative to the login directory; becomes HOME. */
  readonly root: string;
  /** The working directory (inside `root`), absolute or relative to the login directory. */
  readonly cwd: string;
  /** The command's environment besides HOME (the remote's is cleared with `env -i`). */
  readonly env: Readonly<Record<string, string>>;
  readonly command: string;
  /**
   * Start a new session with util-linux `setsid -w` (docker exec: the command is not a group leader).
   * Without it the script's shell must already lead its process group (sshd makes it a session leader).
   */
  readonly newSession: boolean;
}

/**
 * A `/bin/sh` script that records its process group, enters `cwd`, and runs the command with exactly
 * `env`. Pass it as `sh -c <script>`; it exits with the command's status (126 when `cwd` is missing).
 */
export function remoteRunScript(input: RemoteRunInput): string {
  for (const name of Object.keys(input.env)) {
    if (!ENV_NAME.test(name)) {
      throw new HeraldError(`"${name}" is not a valid environment variable name: use letters, digits and _`, {
        code: "invalid_input",
      });
    }
  }
  const env = Object.entries(input.env).map(([k, v]) => shellQuote(`${k}=${v}`));
  const run = [
    `echo $$ > ${shellQuote(input.pidFile)}`,
    `start=$PWD`,
    `cd -- ${shellQuote(input.root)} || { echo "workspace directory missing: run prepare first" >&2; exit 126; }`,
    `ws=$PWD; cd -- "$start"`,
    `cd -- ${shellQuote(input.cwd)} || { echo "working directory missing in the workspace" >&2; exit 126; }`,
    `env -i HOME="$ws" ${env.join(" ")} /bin/sh -c ${shellQuote(input.command)}`,
    `rc=$?; rm -f ${shellQuote(input.pidFile)}; exit $rc`,
  ].join("\n");
  if (!input.newSession) return run;
  return `exec setsid -w /bin/sh -c ${shellQuote(run)}`;
}

/**
 * A `/bin/sh` script that signals the process group recorded in `pidFile`, waiting up to 2 s for the
 * file (a kill right after the start may come before the command wrote it). With `escalateAfterMs`
 * it sends SIGKILL when the group outlives that grace. It removes the pid file once the group got
 * SIGKILL or is gone (the killed command cannot do it itself).
 */
export function remoteKillScript(pidFile: string, signal: NodeJS.Signals, escalateAfterMs?: number): string {
  const f = shellQuote(pidFile);
  const sig = signal.replace(/^SIG/, "");
  const lines = [
    `i=0; while [ ! -s ${f} ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done`,
    `[ -s ${f} ] || exit 0`,
    `pg=$(cat ${f})`,
    `kill -s ${sig} -- -"$pg" 2>/dev/null`,
  ];
  if (escalateAfterMs !== undefined && sig !== "KILL") {
    const ticks = Math.max(1, Math.ceil(escalateAfterMs / 100));
    lines.push(
      `i=0; while kill -0 -- -"$pg" 2>/dev/null && [ $i -lt ${ticks} ]; do sleep 0.1; i=$((i+1)); done`,
      `kill -s KILL -- -"$pg" 2>/dev/null; rm -f ${f}`,
    );
  } else if (sig === "KILL") {
    lines.push(`rm -f ${f}`);
  } else {
    lines.push(`kill -0 -- -"$pg" 2>/dev/null || rm -f ${f}`);
  }
  lines.push("exit 0");
  return lines.join("\n");
}
