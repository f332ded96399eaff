/**
 * `CloudBackend`: commands and files in a cloud sandbox (Daytona, E2B, Modal, Vercel Sandbox), one
 * sandbox per workspace (so per session, or per user with `exec.workspace_scope: user`), through a
 * provider driver (`cloud-types.ts`) whose SDK is imported only when the backend is first used.
 *
 * Lifecycle: made on first use, paused (or stopped) after `idleStopMs` without a command or file call
 * and no background process running, resumed with its files on the next use, deleted when the
 * session ends (`release`) or its workspace is pruned. Its id is recorded beside the workspaces
 * (`cloud-records.ts`), so a restart resumes it. A 429 is retried with backoff (the provider's
 * Retry-After when it gives one); a 404 for a recorded sandbox means it was deleted elsewhere: a new
 * one is made and the next command's output (or file error) tells the agent its files are gone.
 */
import { randomBytes } from "node:crypto";
import { basename } from "node:path";
import { describeError, HeraldError } from "../../core/errors.js";
import { type Logger, silentLogger } from "../../core/logger.js";
import { sleep } from "../../core/sleep.js";
import { CloudWorkspaceFiles } from "./cloud-files.js";
import { CloudProcess } from "./cloud-process.js";
import {
  readSandboxRecord,
  removeSandboxRecord,
  type SandboxRecord,
  writeSandboxRecord,
} from "./cloud-records.js";
import { type CloudProviderName, type CloudSandboxDriver, SandboxLostError } from "./cloud-types.js";
import { remoteWorkdir } from "./paths.js";
import {
  type Availability,
  DEFAULT_PATH,
  type ExecutionBackend,
  type SpawnedProcess,
  type SpawnRequest,
  type Workspace,
  type WorkspaceFiles,
} from "./types.js";

/** Options of `CloudBackend`. */
export interface CloudBackendOptions {
  readonly provider: CloudProviderName;
  /** Builds the driver (imports the SDK); called once, on first use. Throws `ConfigError` for missing keys. */
  readonly driver: () => Promise<CloudSandboxDriver>;
  /** The workspace inside the sandbox; `{workspace}` is replaced by the workspace's folder name. */
  readonly workdir: string;
  /** Pause a sandbox this long after its last use. @defaultValue 600_000 (10 minutes) */
  readonly idleStopMs?: number;
  /** Tries of a call the provider answers 429. @defaultValue 5 */
  readonly rateLimitTries?: number;
  /** First backoff after a 429 without Retry-After, doubled each time. @defaultValue 500 */
  readonly retryBaseDelayMs?: number;
  /** @defaultValue 2_000 */
  readonly killGraceMs?: number;
  readonly logger?: Logger;
}

/** What the backend keeps of one workspace's sandbox while this process runs. */
interface Live {
  id: string;
  running: boolean;
  busy: number;
  timer?: NodeJS.Timeout | undefined;
  /** Told once to the agent: the sandbox was lost and made anew. */
  notice?: string | undefined;
}

const LOST_NOTICE =
  "Note: this workspace's cloud sandbox was deleted outside Herald (expired or removed at the provider); a new, empty one was made, so files written before are gone.";

/** Runs commands and keeps files in one cloud sandbox per workspace; see the module comment. */
export class CloudBackend implements ExecutionBackend {
  readonly name: CloudProviderName;
  private readonly options: CloudBackendOptions;
  private readonly log: Logger;
  private driverPromise: Promise<CloudSandboxDriver> | undefined;
  private readonly live = new Map<string, Live>();
  private readonly preparing = new Map<string, Promise<Live>>();
  private closed = false;

  constructor(options: CloudBackendOptions) {
    this.name = options.provider;
    this.options = options;
    this.log = (options.logger ?? silentLogger()).child({
      component: "cloud-sandbox",
      provider: options.provider,
    });
  }

  /** The driver, built on first use (the SDK's import happens here). */
  driver(): Promise<CloudSandboxDriver> {
    this.driverPromise ??= this.options.driver();
    this.driverPromise.catch(() => {
      this.driverPromise = undefined; // A missing key fixed later is seen at the next use.
    });
    return this.driverPromise;
  }

  /** Where every workspace's commands see it, when that is one path (no `{workspace}` in the workdir). */
  fixedRoot(): string | undefined {
    return this.options.workdir.includes("{workspace}") ? undefined : this.options.workdir;
  }

  /** The workspace root inside the sandbox. */
  remoteDir(workspace: Workspace): string {
    return this.options.workdir.replaceAll("{workspace}", basename(workspace.dir));
  }

  async checkAvailable(): Promise<Availability> {
    const provider = this.name;
    try {
      const driver = await this.driver();
      await this.withRetry(() => driver.check());
      return { available: true };
    } catch (err) {
      const status = this.driverPromise
        ? (await this.driverPromise.catch(() => undefined))?.statusOf(err)
        : undefined;
      const fix =
        status === 401 || status === 403
          ? `the ${provider} API refused the key (${status}): create a new key and set it (see herald doctor)`
          : `check the ${provider} key and API address in the exec section or the environment`;
      return {
        available: false,
        missing: `the ${provider} sandbox API cannot be used: ${describeError(err)}`,
        fix,
      };
    }
  }

  async prepare(workspace: Workspace): Promise<void> {
    await this.ensure(workspace);
  }

  spawn(workspace: Workspace, request: SpawnRequest): SpawnedProcess {
    const root = this.remoteDir(workspace);
    const cwd = remoteWorkdir(root, request.workdir);
    return new CloudProcess(
      {
        run: (command, onStdout, onStderr) =>
          this.use(workspace, async (driver, live) => {
            const notice = live.notice;
            live.notice = undefined;
            if (notice) onStderr(`${notice}\n`);
            return driver.exec(live.id, { command, onStdout, onStderr });
          }),
        runQuiet: (command) =>
          this.use(workspace, (driver, live) =>
            driver.exec(live.id, { command, onStdout: () => {}, onStderr: () => {} }),
          ).then(
            () => undefined,
            (err: unknown) => this.log.warn({ error: describeError(err) }, "kill in the sandbox failed"),
          ),
      },
      {
        root,
        cwd,
        env: { PATH: DEFAULT_PATH, LANG: "C.UTF-8", ...request.env },
        command: request.command,
        provider: this.name,
        killGraceMs: this.options.killGraceMs ?? 2_000,
      },
    );
  }

  files(workspace: Workspace): WorkspaceFiles {
    const key = workspace.dir;
    return new CloudWorkspaceFiles(
      {
        stat: (path) => this.use(workspace, (d, l) => d.stat(l.id, path)),
        readFile: (path) => this.use(workspace, (d, l) => d.readFile(l.id, path)),
        writeFile: (path, data) => this.use(workspace, (d, l) => d.writeFile(l.id, path, data)),
        run: (command) =>
          this.use(workspace, async (d, l) => {
            let stderr = "";
            const code = await d.exec(l.id, { command, onStdout: () => {}, onStderr: (s) => (stderr += s) });
            return { code, stderr };
          }),
        takeNotice: () => {
          const live = this.live.get(key);
          const notice = live?.notice;
          if (live) live.notice = undefined;
          return notice;
        },
      },
      this.remoteDir(workspace),
    );
  }

  /** The session ended: its sandbox is deleted with its files. Never throws. */
  async release(workspace: Workspace): Promise<void> {
    const key = workspace.dir;
    const live = this.live.get(key);
    clearTimeout(live?.timer);
    this.live.delete(key);
    const record = await readSandboxRecord(key);
    const id = live?.id ?? record?.id;
    if (!id) return;
    try {
      const driver = await this.driver();
      await this.withRetry(() => driver.remove(id)).catch((err: unknown) => {
        if (driver.statusOf(err) !== 404) throw err;
      });
      await removeSandboxRecord(key);
      this.log.info({ sandbox: id }, "sandbox deleted");
    } catch (err) {
      this.log.warn({ sandbox: id, error: describeError(err) }, "sandbox not deleted");
    }
  }

  /** Pauses every sandbox this process runs (their files stay); idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const running = [...this.live].filter(([, live]) => live.running);
    for (const [, live] of this.live) clearTimeout(live.timer);
    await Promise.all(running.map(([dir, live]) => this.pause(dir, live)));
    const driver = await this.driverPromise?.catch(() => undefined);
    await driver?.close?.();
  }

  /** Runs `fn` on the workspace's running sandbox: made or resumed first, idle timer held meanwhile. */
  private async use<T>(
    workspace: Workspace,
    fn: (driver: CloudSandboxDriver, live: Live) => Promise<T>,
  ): Promise<T> {
    const driver = await this.driver();
    const live = await this.ensure(workspace);
    try {
      return await this.holding(workspace, live, () => this.withRetry(() => fn(driver, live)));
    } catch (err) {
      if (driver.statusOf(err) !== 404 || !(await this.isGone(driver, live.id))) throw err;
      const fresh = await this.replace(workspace, live.id, err);
      return this.holding(workspace, fresh, () => this.withRetry(() => fn(driver, fresh)));
    }
  }

  /** Runs `fn` with `live` marked busy (no idle pause meanwhile), then starts its idle timer. */
  private async holding<T>(workspace: Workspace, live: Live, fn: () => Promise<T>): Promise<T> {
    live.busy++;
    clearTimeout(live.timer);
    try {
      return await fn();
    } finally {
      live.busy--;
      this.scheduleIdle(workspace.dir, live);
    }
  }

  /** Whether the sandbox `id` is gone (a 404 of a file call may only mean a missing file). */
  private async isGone(driver: CloudSandboxDriver, id: string): Promise<boolean> {
    try {
      await this.withRetry(() => driver.resume(id));
      return false;
    } catch (err) {
      return driver.statusOf(err) === 404;
    }
  }

  /** The workspace's sandbox, running: this process's, the recorded one resumed, or a new one. */
  private async ensure(workspace: Workspace): Promise<Live> {
    const key = workspace.dir;
    const known = this.live.get(key);
    if (known?.running) return known;
    const pending = this.preparing.get(key);
    if (pending) return pending;
    const started = this.start(workspace, known).finally(() => this.preparing.delete(key));
    this.preparing.set(key, started);
    return started;
  }

  private async start(workspace: Workspace, known: Live | undefined): Promise<Live> {
    const driver = await this.driver();
    const record = await readSandboxRecord(workspace.dir);
    const id = known?.id ?? (record?.provider === this.name ? record.id : undefined);
    if (!id) return this.create(workspace, record, undefined);
    let running: string;
    try {
      running = (await this.withRetry(() => driver.resume(id))) ?? id;
    } catch (err) {
      if (driver.statusOf(err) !== 404) throw this.failure("resume", err);
      return this.replace(workspace, id, err);
    }
    const live: Live = { id: running, running: true, busy: 0, notice: known?.notice };
    this.live.set(workspace.dir, live);
    await writeSandboxRecord(workspace.dir, {
      ...(record ?? this.fresh(running)),
      id: running,
      runningSince: Date.now(),
    });
    this.scheduleIdle(workspace.dir, live);
    return live;
  }

  /** The sandbox `lostId` is gone: make a new one and keep the notice for the agent. */
  private async replace(workspace: Workspace, lostId: string, cause: unknown): Promise<Live> {
    this.log.warn(
      { sandbox: lostId, error: describeError(new SandboxLostError(this.name, lostId, cause)) },
      "sandbox lost, making a new one",
    );
    const record = await readSandboxRecord(workspace.dir);
    return this.create(workspace, record, LOST_NOTICE);
  }

  private async create(
    workspace: Workspace,
    before: SandboxRecord | undefined,
    notice: string | undefined,
  ): Promise<Live> {
    const driver = await this.driver();
    // A suffix of its own: a name the provider still holds (a record lost here) must not collide.
    const suffix = randomBytes(3).toString("hex");
    const name = `herald-${basename(workspace.dir).slice(0, 48)}-${suffix}`.replace(/[^A-Za-z0-9-]/g, "-");
    let id: string;
    try {
      id = await this.withRetry(() => driver.create(name, { "herald-workspace": basename(workspace.dir) }));
    } catch (err) {
      throw this.failure("create", err);
    }
    const live: Live = { id, running: true, busy: 0, notice };
    this.live.set(workspace.dir, live);
    const runningMs = before
      ? before.runningMs + (before.runningSince ? Date.now() - before.runningSince : 0)
      : 0;
    await writeSandboxRecord(workspace.dir, { ...this.fresh(id), runningMs, runningSince: Date.now() });
    this.log.info({ sandbox: id }, "sandbox created");
    // Make the workspace folder; a failure here shows again at the command that needs it.
    await driver
      .exec(id, {
        command: `mkdir -p -- '${this.remoteDir(workspace).replaceAll("'", "'\\''")}'`,
        onStdout: () => {},
        onStderr: () => {},
      })
      .catch((err: unknown) => this.log.warn({ error: describeError(err) }, "workspace folder not made"));
    this.scheduleIdle(workspace.dir, live);
    return live;
  }

  private fresh(id: string): SandboxRecord {
    return { provider: this.name, id, createdAt: Date.now(), runningMs: 0 };
  }

  private scheduleIdle(dir: string, live: Live): void {
    clearTimeout(live.timer);
    if (live.busy > 0 || this.closed) return;
    live.timer = setTimeout(() => void this.pause(dir, live), this.options.idleStopMs ?? 600_000);
    live.timer.unref();
  }

  private async pause(dir: string, live: Live): Promise<void> {
    if (live.busy > 0 || !live.running) return;
    live.running = false;
    try {
      const driver = await this.driver();
      const next = (await this.withRetry(() => driver.pause(live.id))) ?? live.id;
      const record = await readSandboxRecord(dir);
      if (record?.id === live.id && record.runningSince !== undefined)
        await writeSandboxRecord(dir, {
          ...record,
          id: next,
          runningMs: record.runningMs + Date.now() - record.runningSince,
          runningSince: undefined,
        });
      live.id = next;
      this.log.info({ sandbox: live.id }, "idle sandbox paused");
    } catch (err) {
      this.log.warn({ sandbox: live.id, error: describeError(err) }, "sandbox not paused");
    }
  }

  /** Calls `fn`, trying again after a 429 with backoff (Retry-After when given). */
  private async withRetry<T>(fn: () => Promise<T>): Promise<T> {
    const tries = this.options.rateLimitTries ?? 5;
    const base = this.options.retryBaseDelayMs ?? 500;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const driver = await this.driverPromise?.catch(() => undefined);
        if (driver?.statusOf(err) !== 429 || attempt >= tries) throw err;
        const wait = driver.retryAfterOf?.(err) ?? Math.min(base * 2 ** (attempt - 1), 30_000);
        this.log.warn({ attempt, waitMs: wait }, "sandbox API rate limit (429), retrying");
        await sleep(wait);
      }
    }
  }

  private failure(what: "create" | "resume", err: unknown): HeraldError {
    return new HeraldError(
      `cannot ${what} the ${this.name} sandbox: ${describeError(err)}; check the provider's status and your quota, then try again`,
      { code: "tool_error", cause: err, retryable: true },
    );
  }
}

/** Builds a `CloudBackend`. */
export function createCloudBackend(options: CloudBackendOptions): CloudBackend {
  return new CloudBackend(options);
}
