/**
 * `ProcessRegistry`: background processes per owner (a session key), for the `process` tool. Each
 * process's stdout and stderr go to one capped ring log; `poll` returns what is new since the last
 * poll, `log` pages through what is kept.
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { type Logger, silentLogger } from "../../core/logger.js";
import { droppedMarker, RingLog } from "./output.js";
import { terminate } from "./run.js";
import type { ExecutionBackend, SpawnedProcess, SpawnRequest, Workspace } from "./types.js";

/** A background process as the `process` tool reports it. */
export interface ProcessInfo {
  readonly id: string;
  readonly ownerKey: string;
  readonly command: string;
  readonly workspaceDir: string;
  readonly status: "running" | "exited";
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Epoch ms. */
  readonly startedAt: number;
  /** Epoch ms, once exited. */
  readonly endedAt: number | null;
  /** Time it ran (so far), ms. */
  readonly runtimeMs: number;
}

/** New output since the previous poll. `droppedChars` were lost to the ring before being polled. */
export interface PollResult {
  readonly info: ProcessInfo;
  readonly output: string;
  readonly droppedChars: number;
}

/** A page of the log. `nextOffset` is where the following page starts; `totalChars` all ever written. */
export interface LogPage {
  readonly text: string;
  readonly offset: number;
  readonly nextOffset: number;
  readonly totalChars: number;
  /** Offset of the oldest character still kept (older ones were dropped from the ring). */
  readonly firstKeptOffset: number;
}

/** Options of `ProcessRegistry`. */
export interface ProcessRegistryOptions {
  readonly backend: ExecutionBackend;
  /** Characters kept per process log. @defaultValue 200_000 */
  readonly maxLogChars?: number;
  /** Time between SIGTERM and SIGKILL on kill. @defaultValue 2_000 */
  readonly killGraceMs?: number;
  /** Processes one owner may have running at once; `start` refuses more. @defaultValue 16 */
  readonly maxRunningPerOwner?: number;
  /** Exited processes kept per owner for `list`/`log`; older ones are forgotten. @defaultValue 20 */
  readonly keepExitedPerOwner?: number;
  /**
   * Called once when a process exits ("notify on exit"). May be async; a throw or rejection is logged
   * and otherwise ignored.
   */
  readonly onExit?: (info: ProcessInfo) => void | Promise<void>;
  /**
   * The worker this registry runs on (Redis): process ids end in `@<worker>`, so a turn on another
   * worker that is given such an id says where the process runs. Undefined on one machine: ids are
   * `p_<hex>`.
   */
  readonly worker?: string | undefined;
  readonly logger?: Logger;
}

interface Entry {
  readonly id: string;
  readonly ownerKey: string;
  readonly command: string;
  readonly workspaceDir: string;
  readonly startedAt: number;
  readonly proc: SpawnedProcess;
  readonly log: RingLog;
  pollCursor: number;
  endedAt: number | null;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  readonly done: Promise<void>;
}

/** Background processes keyed by owner; every method but `start` refuses ids of another owner. */
export class ProcessRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly backend: ExecutionBackend;
  private readonly maxLogChars: number;
  private readonly killGraceMs: number;
  private readonly keepExited: number;
  private readonly maxRunning: number;
  private readonly onExit: ProcessRegistryOptions["onExit"];
  /** The worker ids name (`ProcessRegistryOptions.worker`). */
  readonly worker: string | undefined;
  private readonly log: Logger;

  constructor(options: ProcessRegistryOptions) {
    this.backend = options.backend;
    this.maxLogChars = options.maxLogChars ?? 200_000;
    this.killGraceMs = options.killGraceMs ?? 2_000;
    this.keepExited = options.keepExitedPerOwner ?? 20;
    this.maxRunning = options.maxRunningPerOwner ?? 16;
    this.onExit = options.onExit;
    this.worker = options.worker;
    this.log = options.logger ?? silentLogger();
  }

  /**
   * Starts `request.command` in the background and returns at once. Throws `HeraldError`
   * ("invalid_input") when the owner already runs `maxRunningPerOwner`, and what `backend.spawn` throws.
   */
  start(ownerKey: string, workspace: Workspace, request: SpawnRequest): ProcessInfo {
    const running = this.list(ownerKey).filter((p) => p.status === "running").length;
    if (running >= this.maxRunning) {
      throw new HeraldError(
        `this session already runs ${running} background processes (the limit): kill one before starting another`,
        { code: "invalid_input" },
      );
    }
    const proc = this.backend.spawn(workspace, request);
    const id = `p_${randomBytes(4).toString("hex")}${this.worker ? `@${this.worker}` : ""}`;
    const log = new RingLog(this.maxLogChars);
    proc.stdout.on("data", (chunk: string) => log.append(chunk));
    proc.stderr.on("data", (chunk: string) => log.append(chunk));
    const entry: Entry = {
      id,
      ownerKey,
      command: request.command,
      workspaceDir: resolve(workspace.dir),
      startedAt: Date.now(),
      proc,
      log,
      pollCursor: 0,
      endedAt: null,
      exitCode: null,
      signal: null,
      done: proc.exited.then((status) => {
        proc.kill("SIGKILL"); // children it left in its group; see runCommand
        entry.endedAt = Date.now();
        entry.exitCode = status.exitCode;
        entry.signal = status.signal;
        this.notify(entry);
        this.forgetOldExited(ownerKey);
      }),
    };
    this.entries.set(id, entry);
    this.log.debug({ id, ownerKey }, "background process started");
    return infoOf(entry);
  }

  private notify(entry: Entry): void {
    if (!this.onExit) return;
    const info = infoOf(entry);
    Promise.resolve()
      .then(() => this.onExit?.(info))
      .catch((err: unknown) => this.log.warn({ id: entry.id, err }, "onExit callback failed"));
  }

  private forgetOldExited(ownerKey: string): void {
    const exited = [...this.entries.values()].filter((e) => e.ownerKey === ownerKey && e.endedAt !== null);
    for (const old of exited.slice(0, Math.max(0, exited.length - this.keepExited)))
      this.entries.delete(old.id);
  }

  private get(ownerKey: string, id: string): Entry {
    const entry = this.entries.get(id);
    if (!entry || entry.ownerKey !== ownerKey) {
      const where = id.includes("@") ? id.slice(id.lastIndexOf("@") + 1) : undefined;
      if (this.worker && where && where !== this.worker)
        throw new HeraldError(
          `background process "${id}" runs on worker ${where}, and this turn runs on worker ${this.worker}: ` +
            "a background process stays on the worker that started it, so it cannot be polled, waited for, " +
            "written to or killed from here. The files it wrote before that turn ended are in the workspace; " +
            "start it again here if you still need it.",
          { code: "not_found" },
        );
      throw new HeraldError(`no background process "${id}" in this session: call list to see the ids`, {
        code: "not_found",
      });
    }
    return entry;
  }

  /** The owner's processes, oldest first. */
  list(ownerKey: string): ProcessInfo[] {
    return [...this.entries.values()].filter((e) => e.ownerKey === ownerKey).map(infoOf);
  }

  /** Output written since the previous poll (or the start) and the status. */
  poll(ownerKey: string, id: string): PollResult {
    const entry = this.get(ownerKey, id);
    const { text, skipped } = entry.log.read(entry.pollCursor);
    entry.pollCursor = entry.log.end;
    return {
      info: infoOf(entry),
      output: skipped > 0 ? droppedMarker(skipped) + text : text,
      droppedChars: skipped,
    };
  }

  /**
   * A page of the kept log: `limit` characters from `offset` (absolute, from the first character the
   * process wrote). @param limit @defaultValue 20_000
   */
  readLog(ownerKey: string, id: string, offset = 0, limit = 20_000): LogPage {
    const entry = this.get(ownerKey, id);
    const { text, from } = entry.log.read(offset, limit);
    return {
      text,
      offset: from,
      nextOffset: from + text.length,
      totalChars: entry.log.end,
      firstKeptOffset: entry.log.firstKept,
    };
  }

  /** Waits until the process exits or `timeoutMs` passes, then reports its status. Does not kill. */
  async wait(ownerKey: string, id: string, timeoutMs: number, signal?: AbortSignal): Promise<ProcessInfo> {
    const entry = this.get(ownerKey, id);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      entry.done,
      new Promise<void>((done) => {
        timer = setTimeout(done, timeoutMs);
        onAbort = done;
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    return infoOf(entry);
  }

  /** Kills the process group (SIGTERM, SIGKILL after the grace) and resolves once it exited. */
  async kill(ownerKey: string, id: string): Promise<ProcessInfo> {
    const entry = this.get(ownerKey, id);
    if (entry.endedAt === null) await terminate(entry.proc, this.killGraceMs);
    await entry.done;
    return infoOf(entry);
  }

  /** Writes to the process's stdin; `end` closes stdin afterwards (EOF). */
  async write(ownerKey: string, id: string, data: string, end = false): Promise<void> {
    const entry = this.get(ownerKey, id);
    await entry.proc.write(data);
    if (end) entry.proc.closeStdin();
  }

  /** Whether a running process has `workspaceDir` as its workspace (pruning must skip it). */
  isBusy(workspaceDir: string): boolean {
    const dir = resolve(workspaceDir);
    return [...this.entries.values()].some((e) => e.endedAt === null && e.workspaceDir === dir);
  }

  /**
   * The workspaces where a process of this registry runs now, each once: housekeeping marks them used
   * every few minutes, so other processes sharing the workspaces see them in use.
   */
  busyWorkspaces(): string[] {
    const running = [...this.entries.values()].filter((e) => e.endedAt === null);
    return [...new Set(running.map((e) => e.workspaceDir))];
  }

  /** Kills every process of `ownerKey` and forgets them (session reset). */
  async killAll(ownerKey: string): Promise<void> {
    const owned = [...this.entries.values()].filter((e) => e.ownerKey === ownerKey);
    await Promise.all(owned.map((e) => this.kill(ownerKey, e.id)));
    for (const e of owned) this.entries.delete(e.id);
  }

  /** Kills every process of every owner (shutdown). */
  async closeAll(): Promise<void> {
    const owners = new Set([...this.entries.values()].map((e) => e.ownerKey));
    await Promise.all([...owners].map((owner) => this.killAll(owner)));
  }
}

function infoOf(entry: Entry): ProcessInfo {
  return {
    id: entry.id,
    ownerKey: entry.ownerKey,
    command: entry.command,
    workspaceDir: entry.workspaceDir,
    status: entry.endedAt === null ? "running" : "exited",
    exitCode: entry.exitCode,
    signal: entry.signal,
    startedAt: entry.startedAt,
    endedAt: entry.endedAt,
    runtimeMs: (entry.endedAt ?? Date.now()) - entry.startedAt,
  };
}
