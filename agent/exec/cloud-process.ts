/**
 * `CloudProcess`: a command in a cloud sandbox as a `SpawnedProcess`. The providers' exec APIs take a
 * command and answer with its output and exit status; none keeps a stdin pipe open the way a local
 * child does. So what is written to stdin before the command starts (the next event-loop turn; the
 * terminal tool writes its `stdin` at once) is handed to it, and a later write is refused with a
 * reason. A kill runs a second command in the sandbox that signals the recorded process group
 * (`remote.ts`), as the ssh and docker backends do.
 */
import { Readable } from "node:stream";
import { describeError, HeraldError } from "../../core/errors.js";
import { shellQuote } from "./child.js";
import { remoteKillScript, remotePidFile, remoteRunScript } from "./remote.js";
import type { ExitStatus, SpawnedProcess } from "./types.js";

/** What a `CloudProcess` needs of its backend. */
export interface CloudProcessPorts {
  /** Runs a shell line in the workspace's sandbox to its end; output through the callbacks. */
  run(command: string, onStdout: (s: string) => void, onStderr: (s: string) => void): Promise<number>;
  /** Runs a short shell line there (the kill script); never rejects. */
  runQuiet(command: string): Promise<void>;
}

/** How the command runs: the workspace root and working directory as the sandbox sees them. */
export interface CloudCommand {
  readonly root: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly command: string;
  readonly provider: string;
  /** Time the group gets after SIGTERM before SIGKILL, ms. */
  readonly killGraceMs: number;
}

/** Starts `command` on the next turn of the event loop; see the module comment. */
export class CloudProcess implements SpawnedProcess {
  readonly pid = undefined;
  readonly stdout = new Readable({ read() {}, encoding: "utf8" });
  readonly stderr = new Readable({ read() {}, encoding: "utf8" });
  readonly exited: Promise<ExitStatus>;
  private readonly input: Buffer[] = [];
  private stdinClosed = false;
  private state: "waiting" | "running" | "done" = "waiting";
  private cancelled: NodeJS.Signals | undefined;
  private readonly pidFile = remotePidFile();
  private settle!: (status: ExitStatus) => void;

  constructor(
    private readonly ports: CloudProcessPorts,
    private readonly spec: CloudCommand,
  ) {
    this.exited = new Promise((resolve) => {
      this.settle = resolve;
    });
    setImmediate(() => void this.start());
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.state !== "waiting" || this.stdinClosed) {
      throw new HeraldError(
        `the ${this.spec.provider} sandbox takes a command's input only when it starts; give it with the command (stdin) or through a file`,
        { code: "invalid_input" },
      );
    }
    this.input.push(typeof data === "string" ? Buffer.from(data) : Buffer.from(data));
  }

  closeStdin(): void {
    this.stdinClosed = true;
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    if (this.state === "waiting") {
      this.cancelled = signal;
      return;
    }
    // After the command ended its pid file is gone: nothing of its group is left to reach.
    if (this.state === "done") return;
    const grace = signal === "SIGKILL" ? undefined : this.spec.killGraceMs;
    void this.ports.runQuiet(remoteKillScript(this.pidFile, signal, grace));
  }

  /** The whole shell line: the run script with its input piped in (or none). */
  shellLine(): string {
    const script = remoteRunScript({
      pidFile: this.pidFile,
      root: this.spec.root,
      cwd: this.spec.cwd,
      env: this.spec.env,
      command: this.spec.command,
      newSession: true,
    });
    const stdin = Buffer.concat(this.input);
    const run = `/bin/sh -c ${shellQuote(script)}`;
    if (stdin.length === 0) return `${run} </dev/null`;
    return `printf %s ${shellQuote(stdin.toString("base64"))} | base64 -d | ${run}`;
  }

  private async start(): Promise<void> {
    if (this.cancelled) return this.finish({ exitCode: null, signal: this.cancelled });
    let line: string;
    try {
      line = this.shellLine();
    } catch (err) {
      this.stderr.push(`${describeError(err)}\n`);
      return this.finish({ exitCode: 127, signal: null });
    }
    this.state = "running";
    try {
      const code = await this.ports.run(
        line,
        (s) => this.stdout.push(s),
        (s) => this.stderr.push(s),
      );
      this.finish({ exitCode: code, signal: null });
    } catch (err) {
      this.stderr.push(
        `the command could not run in the ${this.spec.provider} sandbox: ${describeError(err)}\n`,
      );
      this.finish({ exitCode: 127, signal: null });
    }
  }

  private finish(status: ExitStatus): void {
    this.state = "done";
    this.stdout.push(null);
    this.stderr.push(null);
    this.settle(status);
  }
}
