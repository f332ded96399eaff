/**
 * Starts each sandboxed command inside its own pids cgroup without making the command wait for the
 * move. Moving a process into a cgroup makes the kernel wait for an RCU grace period when no move
 * happened just before (about 12 ms here), so the launcher keeps one shell ready that has already
 * entered a fresh cgroup and waits on its stdin. A command is handed to it as the path of a small
 * script (`set -- bwrap args…`, written 0600 in a private directory); the shell sources it and execs
 * bwrap, so every process of the sandbox is born inside the cgroup. Then the next shell is made ready.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { CommandCgroup, PidsCgroups } from "./cgroup.js";
import { isAlive, shellQuote, spawnGroup } from "./child.js";
import type { SpawnedProcess } from "./types.js";

/**
 * `sh -c` script of a ready shell: `$1` is the cgroup.procs file to enter. It reads the path of the
 * command's script from stdin; the rest of stdin is the command's.
 */
const READY_SCRIPT = [
  `echo $$ > "$1" || { echo "herald: cannot enter the sandbox's pids cgroup" >&2; exit 126; }`,
  `IFS= read -r script || exit 0`,
  `. "$script" && exec "$@"`,
].join("\n");

interface ReadyShell {
  readonly proc: SpawnedProcess;
  /** Settles once the shell (or the command it became) exited and its cgroup was given back. */
  released: Promise<void>;
  /** The reading end of the shell's fd 3, which bwrap inherits (`--info-fd 3`). */
  readonly info: Readable;
  readonly cgroup: CommandCgroup;
  exited: boolean;
}

/** Launches programs in per-command pids cgroups through a shell made ready ahead of time. */
export class CgroupLauncher {
  private ready: ReadyShell | undefined;
  private scriptDir: string | undefined;
  private nextScript = 0;
  private closed = false;
  /** Commands launched and not yet exited: the scripts' directory outlives them. */
  private running = 0;

  /** @param maxProcesses the `pids.max` of each command's cgroup. */
  constructor(
    private readonly cgroups: PidsCgroups,
    private readonly maxProcesses: number,
  ) {}

  /**
   * Runs `file args` in a fresh cgroup, as the leader of its own process group, with a pipe on its fd 3
   * (`info`). Throws when no cgroup can be had: the caller must not run the command without its limit.
   */
  launch(file: string, args: readonly string[]): { proc: SpawnedProcess; info: Readable } {
    const shell = this.takeReady() ?? this.startShell();
    const script = this.writeScript(`set -- ${[file, ...args].map(shellQuote).join(" ")}\n`);
    // bwrap writing its info means the shell has read the script and become bwrap: it can go now.
    shell.info.once("data", () => rmSync(script, { force: true }));
    this.running++;
    void shell.proc.exited.then(() => {
      rmSync(script, { force: true });
      this.running--;
      if (this.closed && this.running === 0) this.removeDir();
    });
    void shell.proc.write(`${script}\n`).catch(() => {}); // A shell that died reports through `exited`.
    if (!this.closed) setImmediate(() => this.prepare());
    return { proc: shell.proc, info: shell.info };
  }

  /** Makes a shell ready for the next command, if none is. Never throws (the next launch retries). */
  prepare(): void {
    if (this.closed || (this.ready && !this.ready.exited)) return;
    try {
      this.ready = this.startShell();
    } catch {
      this.ready = undefined; // No cgroup now: `launch` will say so when a command comes.
    }
  }

  /**
   * Ends the ready shell (it reads EOF and exits) and resolves once its cgroup was given back; removes
   * the scripts' directory when no command runs. Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    const shell = this.takeReady();
    shell?.proc.closeStdin();
    if (this.running === 0) this.removeDir();
    await shell?.released;
  }

  private removeDir(): void {
    if (this.scriptDir) rmSync(this.scriptDir, { recursive: true, force: true });
    this.scriptDir = undefined;
  }

  private takeReady(): ReadyShell | undefined {
    const shell = this.ready;
    this.ready = undefined;
    return shell && !shell.exited ? shell : undefined;
  }

  private startShell(): ReadyShell {
    const cgroup = this.cgroups.acquire(this.maxProcesses);
    let info: Readable | undefined;
    const proc = spawnGroup("/bin/sh", ["-c", READY_SCRIPT, "herald-sandbox", cgroup.procsFile], {
      env: {},
      onInfoPipe: (pipe) => {
        info = pipe;
      },
    });
    // No pipe only when the shell could not start; `exited` reports that.
    const shell: ReadyShell = {
      proc,
      info: info ?? Readable.from([]),
      cgroup,
      exited: false,
      released: Promise.resolve(),
    };
    shell.released = proc.exited.then(() => {
      shell.exited = true;
      return cgroup.release();
    });
    return shell;
  }

  /** Writes a command's script; a directory some /tmp cleaner removed is made again. */
  private writeScript(content: string): string {
    const name = `${this.nextScript++}.sh`;
    try {
      writeFileSync(join(this.dir(), name), content, { mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      this.scriptDir = undefined;
      writeFileSync(join(this.dir(), name), content, { mode: 0o600 });
    }
    return join(this.dir(), name);
  }

  private dir(): string {
    if (this.scriptDir === undefined) {
      sweepScriptDirs();
      this.scriptDir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
    }
    return this.scriptDir;
  }
}

/** `herald-sandbox-launch-<pid>-XXXXXX` under the temp dir: one per launcher. */
const DIR_PREFIX = "herald-sandbox-launch-";

/** Removes the script directories of processes no longer running (a gateway that died). Never throws. */
function sweepScriptDirs(): void {
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const owner = Number(name.slice(DIR_PREFIX.length).split("-")[0]);
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}
