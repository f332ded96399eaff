/**
 * `HelperWorkspaceFiles`: a workspace's files through a small long-lived program running where the
 * commands run (the sandbox's file helper, `files-helper-script.ts`). It is started on first use, serves
 * one request at a time over its stdin/stdout, and ends after `idleMs` without a request (or at
 * `close()`), so an idle gateway keeps none running. A helper that dies fails the request in flight
 * with the reason, and the next request starts a new one.
 */
import type { ChildProcess } from "node:child_process";
import { HeraldError } from "../../core/errors.js";
import { fileError } from "./files-local.js";
import type { FileInfo, WorkspaceFiles, WriteOutcome } from "./types.js";

/** Payload bytes per frame: reads are asked for in pieces of at most this, writes sent in them. */
export const HELPER_FRAME_BYTES = 1024 * 1024;

/** One response of the helper: its JSON header and the payload that followed it. */
interface Response {
  readonly header: Record<string, unknown>;
  readonly data: Buffer;
}

/** What `HelperWorkspaceFiles` needs to start its program. */
export interface HelperOptions {
  /** Starts the helper with stdin, stdout and stderr piped. May throw (the request then fails). */
  readonly start: () => ChildProcess;
  /** Idle time after which the helper is ended, ms. @defaultValue 30_000 */
  readonly idleMs?: number;
  /** The longest one request may take before the helper is killed (and the request fails), ms. @defaultValue 60_000 */
  readonly requestTimeoutMs?: number;
  /** How the workspace root is shown in messages. @defaultValue "/workspace" */
  readonly shownRoot?: string;
}

/** The running helper and the parser of its output. */
interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  stderr: string;
  buffer: Buffer;
  waiting: { resolve: (r: Response) => void; reject: (e: Error) => void } | undefined;
  dead: Error | undefined;
}

/** Talks to one helper process; see the module comment. */
export class HelperWorkspaceFiles implements WorkspaceFiles {
  private running: Running | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly idleMs: number;
  private readonly shownRoot: string;

  constructor(private readonly options: HelperOptions) {
    this.idleMs = options.idleMs ?? 30_000;
    this.shownRoot = options.shownRoot ?? "/workspace";
  }

  /** Whether a helper process runs now. */
  get active(): boolean {
    return this.running !== undefined;
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const { header } = await this.call(path, { op: "stat", path });
    if (header.missing) return undefined;
    return {
      kind: header.kind as FileInfo["kind"],
      sizeBytes: Number(header.size),
      mode: Number(header.mode),
      mtimeMs: Number(header.mtimeMs),
    };
  }

  async read(path: string, range: { offset: number; length: number }): Promise<Uint8Array> {
    const parts: Buffer[] = [];
    let offset = range.offset;
    let left = range.length;
    while (left > 0) {
      const length = Math.min(left, HELPER_FRAME_BYTES);
      const { data } = await this.call(path, { op: "read", path, offset, length });
      parts.push(data);
      if (data.length < length) break;
      offset += data.length;
      left -= data.length;
    }
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  write(
    path: string,
    data: Uint8Array | AsyncIterable<Uint8Array>,
    options: { mode?: number } = {},
  ): Promise<WriteOutcome> {
    return this.exclusive(async (running) => {
      const id = this.nextId++;
      const answer = this.awaitResponse(running);
      const start = { id, op: "write", path, mode: options.mode };
      let first = true;
      try {
        if (data instanceof Uint8Array && data.byteLength <= HELPER_FRAME_BYTES) {
          // The common case, a whole file in one frame: one write, one answer.
          await this.send(running, { ...start, more: false }, data);
        } else {
          for await (const piece of pieces(data)) {
            await this.send(running, first ? { ...start, more: true } : { op: "chunk", more: true }, piece);
            first = false;
          }
          await this.send(running, first ? { ...start, more: false } : { op: "chunk", more: false });
        }
      } catch (err) {
        // The data source failed (or the helper died): the helper drops its temporary file.
        if (!first) await this.send(running, { op: "chunk", more: false, abort: true }).catch(() => {});
        await answer.catch(() => undefined);
        throw err;
      }
      const { header } = this.check(await answer, path);
      return {
        created: Boolean(header.created),
        previousBytes: Number(header.previousBytes),
        writtenBytes: Number(header.writtenBytes),
      };
    });
  }

  /** Ends the helper (it exits at the end of its stdin). Idempotent. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const running = this.running;
    this.running = undefined;
    if (!running) return;
    running.child.stdin?.end();
    const timer = setTimeout(() => running.child.kill("SIGKILL"), 2_000);
    await running.exited;
    clearTimeout(timer);
  }

  private call(path: string, header: Record<string, unknown>): Promise<Response> {
    return this.exclusive(async (running) => {
      const answer = this.awaitResponse(running);
      try {
        await this.send(running, { id: this.nextId++, ...header });
      } catch (err) {
        await answer.catch(() => undefined); // The same death rejects both; the send's error is the one told.
        throw err;
      }
      return this.check(await answer, path);
    });
  }

  /** Runs `fn` alone on the helper (started if needed), then arms the idle timer. */
  private exclusive<T>(fn: (running: Running) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      clearTimeout(this.idleTimer);
      try {
        return await fn(this.ensure());
      } finally {
        this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
        this.idleTimer.unref();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private check(response: Response, path: string): Response {
    const { header } = response;
    if (header.ok) return response;
    const code = String(header.code ?? "EIO");
    if (code === "EOUTSIDE") {
      const real = typeof header.real === "string" ? `; it resolves to ${header.real}` : "";
      throw new HeraldError(
        `${path} is outside the workspace (${this.shownRoot}${real}); use a path inside it`,
        { code: "invalid_input" },
      );
    }
    throw fileError(code, String(header.message ?? code), path);
  }

  private ensure(): Running {
    if (this.running && !this.running.dead) return this.running;
    let child: ChildProcess;
    try {
      child = this.options.start();
    } catch (err) {
      throw new HeraldError(`cannot start the workspace's file helper: ${(err as Error).message}`, {
        code: "tool_error",
        cause: err,
        retryable: true,
      });
    }
    const running: Running = {
      child,
      exited: new Promise((resolve) => child.once("close", () => resolve())),
      stderr: "",
      buffer: Buffer.alloc(0),
      waiting: undefined,
      dead: undefined,
    };
    child.stdin?.on("error", () => {}); // A dead helper is reported through `close` below.
    child.stderr?.on("data", (chunk: Buffer) => {
      running.stderr = (running.stderr + chunk.toString("utf8")).slice(-2_000);
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      running.buffer = running.buffer.length ? Buffer.concat([running.buffer, chunk]) : chunk;
      this.parse(running);
    });
    child.once("error", (err) => this.died(running, err.message));
    child.once("close", (code, signal) => this.died(running, `exit ${code ?? signal}`));
    this.running = running;
    return running;
  }

  private died(running: Running, how: string): void {
    if (running.dead) return;
    const reason = running.stderr.trim().split("\n").slice(-3).join("; ") || how;
    running.dead = new HeraldError(`the workspace's file helper stopped (${reason}); try again`, {
      code: "tool_error",
      retryable: true,
    });
    running.waiting?.reject(running.dead);
    running.waiting = undefined;
    if (this.running === running) this.running = undefined;
  }

  private parse(running: Running): void {
    for (;;) {
      const nl = running.buffer.indexOf(10);
      if (nl < 0) return;
      const header = JSON.parse(running.buffer.subarray(0, nl).toString("utf8")) as Record<string, unknown>;
      const size = Number(header.bytes ?? 0);
      if (running.buffer.length < nl + 1 + size) return;
      const data = running.buffer.subarray(nl + 1, nl + 1 + size);
      running.buffer = running.buffer.subarray(nl + 1 + size);
      const waiting = running.waiting;
      running.waiting = undefined;
      waiting?.resolve({ header, data: Buffer.from(data) });
    }
  }

  /** The next response; a helper that stays silent past the request timeout is killed. */
  private awaitResponse(running: Running): Promise<Response> {
    if (running.dead) return Promise.reject(running.dead);
    const timeoutMs = this.options.requestTimeoutMs ?? 60_000;
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => {
        running.stderr += `\nno answer within ${timeoutMs / 1000} s`;
        running.child.kill("SIGKILL");
      }, timeoutMs);
      running.waiting = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  private send(running: Running, header: Record<string, unknown>, payload?: Uint8Array): Promise<void> {
    if (running.dead) return Promise.reject(running.dead);
    const stdin = running.child.stdin;
    if (!stdin)
      return Promise.reject(new HeraldError("the file helper has no stdin", { code: "tool_error" }));
    const line = Buffer.from(
      `${JSON.stringify(payload ? { ...header, bytes: payload.byteLength } : header)}\n`,
    );
    const frame = payload ? Buffer.concat([line, payload]) : line;
    return new Promise((resolve, reject) => {
      stdin.write(frame, (err) => {
        if (!err) return resolve();
        // A write fails (EPIPE) before the child's `close` reports why it stopped: wait for it,
        // briefly, so the caller hears the helper's own reason rather than the pipe's.
        const timer = setTimeout(() => this.died(running, err.message), 2_000);
        void running.exited.then(() => {
          clearTimeout(timer);
          reject(running.dead ?? err);
        });
        if (running.dead) {
          clearTimeout(timer);
          reject(running.dead);
        }
      });
    });
  }
}

/** `data` as pieces of at most `HELPER_FRAME_BYTES`. */
async function* pieces(data: Uint8Array | AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const chunks = data instanceof Uint8Array ? [data] : data;
  for await (const chunk of chunks) {
    for (let offset = 0; offset < chunk.byteLength; offset += HELPER_FRAME_BYTES)
      yield chunk.subarray(offset, offset + HELPER_FRAME_BYTES);
  }
}
