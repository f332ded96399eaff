/**
 * The E2B driver (`e2b`, imported when the backend is first used). Sandboxes start from the
 * configured template with `lifecycle.onTimeout: "pause"` and a timeout a few minutes past Herald's
 * idle time, so a gateway that died leaves a paused sandbox, not a running one. Herald pauses idle
 * ones itself (`pause`) and `Sandbox.connect` resumes them with their files. Commands run through
 * `commands.run` with output streamed (envd's process service); files through `files.getInfo`,
 * `files.read` and `files.write`. `apiUrl` and `sandboxUrl` (or `E2B_DOMAIN`) point the SDK elsewhere.
 */
import type { CloudExecRequest, CloudSandboxDriver } from "./cloud-types.js";
import type { FileInfo } from "./types.js";

/** Options of the E2B driver. */
export interface E2bDriverOptions {
  readonly apiKey: string;
  readonly domain?: string | undefined;
  readonly apiUrl?: string | undefined;
  readonly sandboxUrl?: string | undefined;
  /** @defaultValue "base" */
  readonly template?: string | undefined;
  readonly idleStopMs: number;
}

type Sandbox = InstanceType<typeof import("e2b")["Sandbox"]>;

/** Builds the E2B driver; imports the SDK. */
export async function createE2bDriver(options: E2bDriverOptions): Promise<CloudSandboxDriver> {
  const sdk = await import("e2b");
  const connection = {
    apiKey: options.apiKey,
    ...(options.domain ? { domain: options.domain } : {}),
    ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
    ...(options.sandboxUrl ? { sandboxUrl: options.sandboxUrl } : {}),
  };
  const timeoutMs = options.idleStopMs + 5 * 60_000;
  const sandboxes = new Map<string, Sandbox>();
  const sandbox = async (id: string): Promise<Sandbox> => {
    const known = sandboxes.get(id);
    if (known) return known;
    const got = await sdk.Sandbox.connect(id, { ...connection, timeoutMs });
    sandboxes.set(id, got);
    return got;
  };
  const statusOf = (err: unknown): number | undefined => {
    if (err instanceof sdk.RateLimitError) return 429;
    if (err instanceof sdk.SandboxNotFoundError) return 404;
    if (err instanceof sdk.AuthenticationError) return 401;
    return undefined;
  };
  return {
    provider: "e2b",
    async check() {
      await sdk.Sandbox.list({ ...connection, limit: 1 }).nextItems();
    },
    async create(_name, labels) {
      const created = await sdk.Sandbox.create(options.template ?? "base", {
        ...connection,
        timeoutMs,
        metadata: { ...labels },
        lifecycle: { onTimeout: "pause" },
      });
      sandboxes.set(created.sandboxId, created);
      return created.sandboxId;
    },
    async resume(id) {
      sandboxes.delete(id);
      await sandbox(id);
      return undefined;
    },
    async pause(id) {
      sandboxes.delete(id);
      await sdk.Sandbox.pause(id, connection);
      return undefined;
    },
    async remove(id) {
      sandboxes.delete(id);
      const killed = await sdk.Sandbox.kill(id, connection);
      if (!killed) throw new sdk.SandboxNotFoundError(`sandbox ${id} not found`);
    },
    exec: async (id, request) => runCommand(sdk, await sandbox(id), request),
    async stat(id, path) {
      try {
        return fileInfo(await (await sandbox(id)).files.getInfo(path));
      } catch (err) {
        if (err instanceof sdk.FileNotFoundError) return undefined;
        throw err;
      }
    },
    async readFile(id, path) {
      return (await sandbox(id)).files.read(path, { format: "bytes" });
    },
    async writeFile(id, path, data) {
      const copy = new Uint8Array(data.byteLength);
      copy.set(data);
      await (await sandbox(id)).files.write(path, copy.buffer);
    },
    statusOf,
  };
}

/** Runs a command to its end; a non-zero exit is an answer, not a failure. */
async function runCommand(
  sdk: { CommandExitError: typeof import("e2b").CommandExitError },
  sb: Sandbox,
  request: CloudExecRequest,
): Promise<number> {
  try {
    const result = await sb.commands.run(request.command, {
      onStdout: request.onStdout,
      onStderr: request.onStderr,
      timeoutMs: 0,
    });
    return result.exitCode;
  } catch (err) {
    if (err instanceof sdk.CommandExitError) return err.exitCode;
    throw err;
  }
}

function fileInfo(info: {
  type?: string | undefined;
  size: number;
  mode: number;
  modifiedTime?: Date | undefined;
}): FileInfo {
  return {
    kind: info.type === "dir" ? "directory" : info.type === "file" ? "file" : "other",
    sizeBytes: info.size,
    mode: info.mode & 0o7777,
    mtimeMs: info.modifiedTime?.getTime() ?? 0,
  };
}
