/**
 * The Vercel Sandbox driver (`@vercel/sandbox`, imported when the backend is first used). Sandboxes
 * are persistent and named: stopping one saves its files in a snapshot, and `Sandbox.get({ resume })`
 * starts a new session from it. A command runs through `runCommand` with its output streamed as it
 * comes (one NDJSON response per command); files through `readFileToBuffer` and `writeFiles`; `stat`
 * through a command (the API has none). The SDK has no base-URL option: `apiUrl` is applied through
 * its `fetch` option, which rewrites the API's origin.
 */
import { Writable } from "node:stream";
import type { CloudSandboxDriver } from "./cloud-types.js";
import type { FileInfo } from "./types.js";

/** Options of the Vercel Sandbox driver. */
export interface VercelDriverOptions {
  readonly token: string;
  readonly teamId: string;
  readonly projectId: string;
  /** @defaultValue "https://vercel.com/api" */
  readonly apiUrl?: string | undefined;
  /** The image's runtime (`node22`, `python3.13`). @defaultValue Vercel's default */
  readonly runtime?: string | undefined;
  /** A session's longest life; Herald stops idle ones sooner. @defaultValue 2_700_000 (45 minutes) */
  readonly sessionTimeoutMs?: number | undefined;
}

type Sdk = typeof import("@vercel/sandbox");
type Sandbox = Awaited<ReturnType<Sdk["Sandbox"]["get"]>>;

const VERCEL_API = "https://vercel.com/api";

/** Builds the Vercel Sandbox driver; imports the SDK. */
export async function createVercelDriver(options: VercelDriverOptions): Promise<CloudSandboxDriver> {
  const { Sandbox }: Sdk = await import("@vercel/sandbox");
  const base = options.apiUrl?.replace(/\/+$/, "");
  const fetchVia: typeof fetch = (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    return fetch(base && url.startsWith(VERCEL_API) ? base + url.slice(VERCEL_API.length) : url, init);
  };
  const credentials = {
    token: options.token,
    teamId: options.teamId,
    projectId: options.projectId,
    fetch: fetchVia,
  };
  const sandboxes = new Map<string, Sandbox>();
  const sandbox = async (name: string): Promise<Sandbox> => {
    const known = sandboxes.get(name);
    if (known) return known;
    const got = await Sandbox.get({ ...credentials, name, resume: true });
    sandboxes.set(name, got);
    return got;
  };
  const run = async (
    name: string,
    command: string,
    onStdout: (s: string) => void,
    onStderr: (s: string) => void,
  ) => {
    const finished = await (await sandbox(name)).runCommand({
      cmd: "/bin/sh",
      args: ["-c", command],
      stdout: sink(onStdout),
      stderr: sink(onStderr),
    });
    return finished.exitCode;
  };
  return {
    provider: "vercel",
    async check() {
      await Sandbox.list({ ...credentials, limit: 1 });
    },
    async create(name) {
      const created = await Sandbox.create({
        ...credentials,
        name,
        persistent: true,
        timeout: options.sessionTimeoutMs ?? 2_700_000,
        ...(options.runtime ? { runtime: options.runtime } : {}),
      });
      sandboxes.set(created.name, created);
      return created.name;
    },
    async resume(name) {
      sandboxes.delete(name);
      await sandbox(name);
      return undefined;
    },
    async pause(name) {
      await (await sandbox(name)).stop();
      sandboxes.delete(name);
      return undefined;
    },
    async remove(name) {
      const known = sandboxes.get(name) ?? (await Sandbox.get({ ...credentials, name, resume: false }));
      sandboxes.delete(name);
      await known.delete();
    },
    exec: (name, request) => run(name, request.command, request.onStdout, request.onStderr),
    stat: (name, path) => statByCommand((command, onStdout) => run(name, command, onStdout, () => {}), path),
    async readFile(name, path) {
      const data = await (await sandbox(name)).readFileToBuffer({ path });
      if (!data) throw Object.assign(new Error(`${path} does not exist`), { status: 404 });
      return new Uint8Array(data);
    },
    async writeFile(name, path, data) {
      await (await sandbox(name)).writeFiles([{ path, content: Buffer.from(data) }]);
    },
    statusOf: httpStatusOf,
    retryAfterOf,
  };
}

/** The HTTP status of the SDK's `APIError`. */
function httpStatusOf(err: unknown): number | undefined {
  const status = (err as { response?: { status?: unknown } }).response?.status;
  return typeof status === "number" ? status : undefined;
}

/** Retry-After of the SDK's `APIError`, ms. */
function retryAfterOf(err: unknown): number | undefined {
  const value = Number((err as { response?: Response }).response?.headers?.get?.("retry-after"));
  return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

/** A Writable that hands each chunk to `onChunk` as text. */
function sink(onChunk: (s: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      onChunk(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      done();
    },
  });
}

/**
 * `stat` through a command, for providers whose file API has none: undefined when nothing is at
 * `path`. `run` runs a shell line and returns its exit status.
 */
export async function statByCommand(
  run: (command: string, onStdout: (s: string) => void) => Promise<number>,
  path: string,
): Promise<FileInfo | undefined> {
  let out = "";
  const q = `'${path.replaceAll("'", "'\\''")}'`;
  const code = await run(`[ -e ${q} ] || exit 2; stat -L -c '%F|%s|%a|%Y' -- ${q}`, (s) => {
    out += s;
  });
  if (code === 2) return undefined;
  if (code !== 0) throw new Error(`stat of ${path} failed (exit ${code})`);
  return fileInfo(out.trim());
}

/** `stat -c '%F|%s|%a|%Y'` as a `FileInfo`. */
export function fileInfo(line: string): FileInfo {
  const [type = "", size = "0", mode = "0", mtime = "0"] = line.split("|");
  const kind = type.includes("directory") ? "directory" : type.includes("regular") ? "file" : "other";
  return { kind, sizeBytes: Number(size), mode: Number.parseInt(mode, 8), mtimeMs: Number(mtime) * 1000 };
}
