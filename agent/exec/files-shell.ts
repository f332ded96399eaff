/**
 * `ShellWorkspaceFiles`: a workspace's files through the backend's own `spawn`, one short POSIX shell
 * script per call (coreutils `stat`, `tail`/`head`, `cat`, `mv`, `realpath`, `base64`). For backends
 * whose commands run out of this host's reach (`ssh`: the remote host; `docker`: the container), so the
 * files the tools see are exactly the ones the commands see. Each call costs one command's start.
 */
import { HeraldError } from "../../core/errors.js";
import { shellQuote } from "./child.js";
import { fileError } from "./files-local.js";
import type { ExecutionBackend, FileInfo, Workspace, WorkspaceFiles, WriteOutcome } from "./types.js";

/** The checked real path of `$P` in `$R`, or exit 3 printing where it leads (`$PWD` is the workspace). */
function resolveScript(path: string): string {
  return [
    `ws=$(pwd -P); p=${shellQuote(path)}`,
    `R=$(realpath -m -- "$p") || exit 70`,
    `case "$R" in "$ws"|"$ws"/*) ;; *) printf '%s' "$R"; exit 3;; esac`,
  ].join("\n");
}

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A workspace's files, reached through `backend.spawn` (see the module comment). */
export class ShellWorkspaceFiles implements WorkspaceFiles {
  /**
   * @param shownRoot the workspace root as commands see it, for messages.
   * @param timeoutMs the longest one call may take (a file a command keeps growing). @defaultValue 60_000
   */
  constructor(
    private readonly backend: ExecutionBackend,
    private readonly workspace: Workspace,
    private readonly shownRoot: string,
    private readonly timeoutMs = 60_000,
  ) {}

  async stat(path: string): Promise<FileInfo | undefined> {
    const out = await this.run(
      path,
      `${resolveScript(path)}\n[ -e "$R" ] || { echo MISSING; exit 0; }\nstat -L -c '%F|%s|%a|%Y' -- "$R"`,
    );
    const line = out.stdout.trim();
    if (line === "MISSING") return undefined;
    const [type = "", size = "0", mode = "0", mtime = "0"] = line.split("|");
    const kind = type.includes("directory") ? "directory" : type.includes("regular") ? "file" : "other";
    return { kind, sizeBytes: Number(size), mode: Number.parseInt(mode, 8), mtimeMs: Number(mtime) * 1000 };
  }

  async read(path: string, range: { offset: number; length: number }): Promise<Uint8Array> {
    const out = await this.run(
      path,
      [
        resolveScript(path),
        `[ -e "$R" ] || exit 2`,
        `[ -d "$R" ] && exit 21`,
        `[ -f "$R" ] || exit 22`,
        `tail -c +${range.offset + 1} -- "$R" | head -c ${range.length} | base64 | tr -d '\\n'`,
      ].join("\n"),
    );
    return Buffer.from(out.stdout.trim(), "base64");
  }

  async write(
    path: string,
    data: Uint8Array | AsyncIterable<Uint8Array>,
    options: { mode?: number } = {},
  ): Promise<WriteOutcome> {
    const mode = (options.mode ?? 0o644).toString(8);
    const script = [
      resolveScript(path),
      `[ -d "$R" ] && exit 21`,
      `d=$(dirname -- "$R"); mkdir -p -- "$d" || exit 1`,
      `if [ -e "$R" ]; then prev=$(stat -L -c %s -- "$R"); mode=$(stat -L -c %a -- "$R"); else prev=-1; mode=${mode}; fi`,
      `t="$d/.$(basename -- "$R").herald.$$.tmp"`,
      `cat > "$t" && chmod "$mode" -- "$t" && mv -f -- "$t" "$R" || { rm -f -- "$t"; exit 1; }`,
      `printf '%s %s\\n' "$prev" "$(stat -c %s -- "$R")"`,
    ].join("\n");
    const out = await this.run(path, script, data);
    const [prev = "-1", size = "0"] = out.stdout.trim().split(" ");
    return {
      created: prev === "-1",
      previousBytes: Math.max(0, Number(prev)),
      writtenBytes: Number(size),
    };
  }

  /** Runs `script` in the workspace, feeding `input`; maps its exit status to the contract's errors. */
  private async run(
    path: string,
    script: string,
    input?: Uint8Array | AsyncIterable<Uint8Array>,
  ): Promise<Outcome> {
    const proc = this.backend.spawn(this.workspace, { command: script });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, this.timeoutMs);
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk: string) => {
      stdout += chunk;
    });
    proc.stderr.on("data", (chunk: string) => {
      if (stderr.length < 4_000) stderr += chunk;
    });
    try {
      if (input instanceof Uint8Array) await proc.write(input);
      else if (input) for await (const chunk of input) await proc.write(chunk);
    } catch (err) {
      proc.kill("SIGKILL");
      await proc.exited;
      throw err;
    } finally {
      proc.closeStdin();
    }
    const status = await proc.exited.finally(() => clearTimeout(timer));
    if (timedOut)
      throw new HeraldError(
        `${path} took longer than ${this.timeoutMs / 1000} s to read or write; try again`,
        {
          code: "tool_error",
          retryable: true,
        },
      );
    const code = status.exitCode;
    if (code === 0) return { code, stdout, stderr };
    if (code === 3)
      throw new HeraldError(
        `${path} is outside the workspace (${this.shownRoot}; it resolves to ${stdout.trim()}); use a path inside it`,
        { code: "invalid_input" },
      );
    if (code === 2) throw fileError("ENOENT", "", path);
    if (code === 21) throw fileError("EISDIR", "", path);
    if (code === 22) throw fileError("ENOTREG", "", path);
    throw fileError(undefined, stderr.trim() || `exit ${code ?? status.signal}`, path);
  }
}
