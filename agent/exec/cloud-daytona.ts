/**
 * The Daytona driver (`@daytonaio/sdk`, imported when the backend is first used). Sandboxes are made
 * from the configured snapshot, stopped when idle (files kept) and started again; Daytona's own
 * auto-stop is set a few minutes past Herald's idle time, so a gateway that died leaves nothing
 * running for long. Each command runs in a session of its own (`executeSessionCommand`, answered with
 * stdout, stderr and the exit code once it ends; the session is deleted after); a kill runs beside it
 * through `/process/execute`. Files: `getFileDetails`, `downloadFile`, `uploadFile`.
 */
import { randomBytes } from "node:crypto";
import type { CloudExecRequest, CloudSandboxDriver } from "./cloud-types.js";
import type { FileInfo } from "./types.js";

/** Options of the Daytona driver. */
export interface DaytonaDriverOptions {
  readonly apiKey: string;
  /** @defaultValue the SDK's (`https://app.daytona.io/api`) */
  readonly apiUrl?: string | undefined;
  readonly target?: string | undefined;
  /** The snapshot (image) new sandboxes start from. @defaultValue Daytona's default */
  readonly snapshot?: string | undefined;
  /** Herald's idle time; Daytona's auto-stop is set 5 minutes past it. */
  readonly idleStopMs: number;
}

type Sdk = typeof import("@daytonaio/sdk");
type Sandbox = Awaited<ReturnType<InstanceType<Sdk["Daytona"]>["get"]>>;

/** Builds the Daytona driver; imports the SDK. */
export async function createDaytonaDriver(options: DaytonaDriverOptions): Promise<CloudSandboxDriver> {
  const sdk: Sdk = await import("@daytonaio/sdk");
  const client = new sdk.Daytona({
    apiKey: options.apiKey,
    apiUrl: options.apiUrl,
    target: options.target,
    // Polling, not the event socket: one HTTP API to reach (and to fake), nothing held open.
    useDeprecatedPolling: true,
  });
  const sandboxes = new Map<string, Sandbox>();
  const sandbox = async (id: string): Promise<Sandbox> => {
    const known = sandboxes.get(id);
    if (known) return known;
    const got = await client.get(id);
    sandboxes.set(id, got);
    return got;
  };
  const autoStopMinutes = Math.ceil(options.idleStopMs / 60_000) + 5;
  return {
    provider: "daytona",
    async check() {
      for await (const _ of client.list({ limit: 1 })) break;
    },
    async create(name, labels) {
      const created = await client.create(
        {
          name,
          labels: { ...labels },
          autoStopInterval: autoStopMinutes,
          ...(options.snapshot ? { snapshot: options.snapshot } : {}),
        },
        { timeout: 180 },
      );
      sandboxes.set(created.id, created);
      return created.id;
    },
    async resume(id) {
      sandboxes.delete(id);
      const got = await sandbox(id);
      if (got.state !== "started") await got.start(180);
      return undefined;
    },
    async pause(id) {
      await (await sandbox(id)).stop(120);
      return undefined;
    },
    async remove(id) {
      sandboxes.delete(id);
      await (await client.get(id)).delete(120);
    },
    exec: async (id, request) => runInSession(await sandbox(id), request),
    async stat(id, path) {
      try {
        return fileInfo(await (await sandbox(id)).fs.getFileDetails(path));
      } catch (err) {
        if (statusOf(err) === 404) return undefined;
        throw err;
      }
    },
    async readFile(id, path) {
      return new Uint8Array(await (await sandbox(id)).fs.downloadFile(path));
    },
    async writeFile(id, path, data) {
      await (await sandbox(id)).fs.uploadFile(Buffer.from(data), path);
    },
    statusOf,
    retryAfterOf,
    async close() {
      await client[Symbol.asyncDispose]();
    },
  };
}

/**
 * Runs one command in a session of its own: a session's shell runs its commands one after another,
 * and the kill script must run beside the command. The session is deleted after, unwaited.
 */
async function runInSession(sb: Sandbox, request: CloudExecRequest): Promise<number> {
  const session = `herald-${randomBytes(6).toString("hex")}`;
  await sb.process.createSession(session);
  try {
    const out = await sb.process.executeSessionCommand(session, {
      command: request.command,
      runAsync: false,
    });
    if (out.stdout) request.onStdout(out.stdout);
    if (out.stderr) request.onStderr(out.stderr);
    return out.exitCode ?? 1;
  } finally {
    sb.process.deleteSession(session).catch(() => undefined);
  }
}

function retryAfterOf(err: unknown): number | undefined {
  const headers = (err as { headers?: Record<string, unknown> }).headers;
  const value = Number(headers?.["retry-after"]);
  return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { statusCode?: unknown }).statusCode;
  return typeof status === "number" ? status : undefined;
}

function fileInfo(info: {
  isDir: boolean;
  size: number;
  permissions: string;
  mode: string;
  modTime: string;
}): FileInfo {
  const fromPermissions = Number.parseInt(info.permissions, 8);
  return {
    kind: info.isDir ? "directory" : info.mode.startsWith("-") || !info.mode ? "file" : "other",
    sizeBytes: info.size,
    mode: Number.isFinite(fromPermissions) ? fromPermissions : 0o644,
    mtimeMs: Date.parse(info.modTime) || 0,
  };
}
