/**
 * `WorkspaceQuota`: how much disk a workspace may hold. The figure is measured where the commands run
 * (`du -sk` through the backend, so a link cannot send the count elsewhere) and adjusted by the file
 * tools' own writes; a write after a command (or while a background process runs) measures again,
 * commands take a figure up to `freshMs` old. Past the quota, writes
 * through `wrap()` are refused with what is used and what to do, and `commandPrefix()` makes commands
 * run with no room to grow a file (`ulimit -f 0`): they can still look around and delete.
 */
import { HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { runCommand } from "./run.js";
import type { ExecutionBackend, Workspace, WorkspaceFiles, WriteOutcome } from "./types.js";

/** A measured (or since adjusted) figure. */
export interface WorkspaceUsage {
  readonly usedBytes: number;
  readonly quotaBytes: number;
  /** Epoch ms of the measurement. */
  readonly measuredAt: number;
  /** A command ran since: the figure may be low. Writes measure again; commands wait for `freshMs`. */
  readonly dirty: boolean;
}

/** A write that would take the workspace past its quota. */
export class QuotaExceededError extends HeraldError {
  readonly usedBytes: number;
  readonly quotaBytes: number;
  constructor(message: string, usedBytes: number, quotaBytes: number) {
    super(message, { code: "invalid_input" });
    this.name = "QuotaExceededError";
    this.usedBytes = usedBytes;
    this.quotaBytes = quotaBytes;
  }
}

/** `1536` → "1.5 KiB". */
export function formatSize(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** What to do past the quota, as the agent reads it. */
const DELETE_HINT =
  "delete files the task no longer needs (terminal: `du -sh * .[!.]*` shows what is large, `rm` deletes), then try again";

/** Options of `WorkspaceQuota`. */
export interface WorkspaceQuotaOptions {
  readonly backend: ExecutionBackend;
  readonly quotaBytes: number;
  /** How long a measurement counts before the next check measures again, ms. @defaultValue 30_000 */
  readonly freshMs?: number;
  /** The longest a measurement may take, ms. @defaultValue 20_000 */
  readonly measureTimeoutMs?: number;
  /**
   * Whether a background process runs in the workspace at `dir` (it may be writing: the figure is then
   * never taken as exact). @defaultValue none runs
   */
  readonly isBusy?: ((dir: string) => boolean) | undefined;
  readonly logger?: Logger | undefined;
}

/** The quota of every workspace of one backend; see the module comment. */
export class WorkspaceQuota {
  readonly quotaBytes: number;
  private readonly freshMs: number;
  private readonly measureTimeoutMs: number;
  private readonly figures = new Map<string, WorkspaceUsage>();
  private readonly measuring = new Map<string, Promise<WorkspaceUsage | undefined>>();

  constructor(private readonly options: WorkspaceQuotaOptions) {
    this.quotaBytes = options.quotaBytes;
    this.freshMs = options.freshMs ?? 30_000;
    this.measureTimeoutMs = options.measureTimeoutMs ?? 20_000;
  }

  /**
   * The workspace's usage, measured now unless the last figure still holds: for a command, while it is
   * younger than `freshMs`; with `exact` (a write), while nothing but the file tools wrote since (no
   * command ran, no background process runs). Undefined when it could not be measured.
   */
  async usage(workspace: Workspace, exact = false): Promise<WorkspaceUsage | undefined> {
    const known = this.figures.get(workspace.dir);
    if (known) {
      const holds = exact
        ? !known.dirty && !this.options.isBusy?.(workspace.dir)
        : Date.now() - known.measuredAt < this.freshMs;
      if (holds) return known;
    }
    return this.measure(workspace);
  }

  /**
   * A command or background process ran in the workspace at `dir`: the next write measures again
   * (commands keep the figure until it is `freshMs` old, so a run of commands costs one measurement).
   */
  invalidate(dir: string): void {
    const known = this.figures.get(dir);
    if (known) this.figures.set(dir, { ...known, dirty: true });
  }

  /**
   * For a command about to run: `ulimit -f 0; ` (prefix it) when the workspace is past its quota, with
   * the notice for the agent; empty otherwise.
   */
  async commandPrefix(workspace: Workspace): Promise<{ prefix: string; notice?: string }> {
    const usage = await this.usage(workspace);
    if (!usage || usage.usedBytes <= this.quotaBytes) return { prefix: "" };
    return {
      prefix: "ulimit -f 0; ",
      notice: `The workspace holds ${formatSize(usage.usedBytes)}, over its ${formatSize(this.quotaBytes)} quota: this command ran unable to grow any file. To write again, ${DELETE_HINT}.`,
    };
  }

  /** `files` with every write checked against the quota and counted into the figure. */
  wrap(workspace: Workspace, files: WorkspaceFiles): WorkspaceFiles {
    return {
      stat: (path) => files.stat(path),
      read: (path, range) => files.read(path, range),
      write: async (path, data, options) => {
        const usage = await this.usage(workspace, true);
        const before = await files.stat(path);
        const used = usage?.usedBytes ?? 0;
        const room = this.quotaBytes - used + (before?.kind === "file" ? before.sizeBytes : 0);
        const size = data instanceof Uint8Array ? data.byteLength : undefined;
        if (usage && (room < 0 || (size !== undefined && size > room))) throw this.refusal(path, used, size);
        const outcome: WriteOutcome = await files.write(
          path,
          data instanceof Uint8Array || !usage ? data : capped(data, room, () => this.refusal(path, used)),
          options,
        );
        const figure = this.figures.get(workspace.dir);
        if (figure)
          this.figures.set(workspace.dir, {
            ...figure,
            usedBytes: figure.usedBytes + outcome.writtenBytes - outcome.previousBytes,
          });
        return outcome;
      },
    };
  }

  private refusal(path: string, usedBytes: number, addBytes?: number): QuotaExceededError {
    const what = addBytes === undefined ? "" : ` and ${path} would add ${formatSize(addBytes)}`;
    return new QuotaExceededError(
      `${path} was not written: the workspace holds ${formatSize(usedBytes)} of its ${formatSize(this.quotaBytes)} quota${what}; ${DELETE_HINT}`,
      usedBytes,
      this.quotaBytes,
    );
  }

  /** Measures with `du -sk` where the commands run; one measurement per workspace at a time. */
  private measure(workspace: Workspace): Promise<WorkspaceUsage | undefined> {
    const running = this.measuring.get(workspace.dir);
    if (running) return running;
    const measurement = (async () => {
      try {
        const result = await runCommand(this.options.backend, workspace, {
          command: "du -s -k . 2>/dev/null",
          timeoutMs: this.measureTimeoutMs,
        });
        const kib = /^(\d+)/.exec(result.stdout.trim())?.[1];
        if (result.timedOut || kib === undefined) {
          this.options.logger?.warn(
            { dir: workspace.dir, timedOut: result.timedOut },
            "workspace usage not measured",
          );
          return this.figures.get(workspace.dir);
        }
        const usage = {
          usedBytes: Number(kib) * 1024,
          quotaBytes: this.quotaBytes,
          measuredAt: Date.now(),
          dirty: false,
        };
        this.figures.set(workspace.dir, usage);
        return usage;
      } finally {
        this.measuring.delete(workspace.dir);
      }
    })();
    this.measuring.set(workspace.dir, measurement);
    return measurement;
  }
}

/** `data`, failing with `refusal()` once more than `limit` bytes went through. */
async function* capped(
  data: AsyncIterable<Uint8Array>,
  limit: number,
  refusal: () => Error,
): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of data) {
    total += chunk.byteLength;
    if (total > limit) throw refusal();
    yield chunk;
  }
}
