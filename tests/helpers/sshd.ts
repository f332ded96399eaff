/**
 * A private OpenSSH server per test file: `/usr/sbin/sshd -D -e` on a free port of 127.0.0.1 with a
 * throwaway host key, a throwaway user key in a temp `authorized_keys`, as the current user. Nothing of
 * the machine's own ssh setup is read or changed (besides creating `/run/sshd`, which sshd requires).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./net.js";

export interface PrivateSshd {
  readonly host: "127.0.0.1";
  readonly port: number;
  readonly user: string;
  /** The private key that sshd accepts. */
  readonly identityFile: string;
  /** The temp folder: keys, config, pid file. Put client state under it too. */
  readonly dir: string;
  /** Stops sshd and removes the folder. Idempotent. */
  stop(): Promise<void>;
}

const SSHD = "/usr/sbin/sshd";

/** Starts sshd and waits until it accepts TCP connections. Throws when sshd is not installed. */
export async function startSshd(): Promise<PrivateSshd> {
  if (!existsSync(SSHD)) throw new Error("sshd is not installed: apt-get install -y openssh-server");
  // Short path: ssh control sockets live under it and a unix socket path has a ~104 byte limit.
  const dir = mkdtempSync(join(tmpdir(), "hsshd-"));
  const keygen = (file: string) =>
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "herald-test", "-f", file]);
  keygen(join(dir, "host_key"));
  keygen(join(dir, "id_ed25519"));
  copyFileSync(join(dir, "id_ed25519.pub"), join(dir, "authorized_keys"));
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      "StrictModes no",
      "UsePAM no",
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "MaxSessions 64",
      "MaxStartups 64",
      "LogLevel ERROR",
      // bash sources ~/.bashrc for commands run by sshd unless SHLVL says it is nested; this machine's
      // root .bashrc runs `pyenv init` (~1.3 s), which would dominate every test command.
      "SetEnv SHLVL=1",
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(SSHD, ["-D", "-e", "-f", config], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    await waitForPort(port, child, () => stderr);
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let stopped = false;
  return {
    host: "127.0.0.1",
    port,
    user: userInfo().username,
    identityFile: join(dir, "id_ed25519"),
    dir,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sshd exited with ${child.exitCode}: ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`sshd did not listen on 127.0.0.1:${port} within 10 s: ${stderr()}`);
}
