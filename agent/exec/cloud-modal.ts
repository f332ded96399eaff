/**
 * The Modal driver (`modal`, Modal's JavaScript SDK over gRPC, imported when the backend is first
 * used). Modal sandboxes cannot be paused: an idle one is snapshotted (`snapshotFilesystem`, an image)
 * and terminated, and the next use starts a new sandbox from that image, so the workspace's id moves
 * from sandbox (`sb-…`) to image (`im-…`) and back. Modal's own `idleTimeoutMs` is set a few minutes
 * past Herald's idle time. Commands through `exec` with stdout and stderr read as they come; files
 * through `filesystem.readBytes` / `writeBytes`; `stat` through a command.
 */
import type { CloudSandboxDriver } from "./cloud-types.js";
import { statByCommand } from "./cloud-vercel.js";

/** Options of the Modal driver. */
export interface ModalDriverOptions {
  readonly tokenId: string;
  readonly tokenSecret: string;
  /** @defaultValue "herald" */
  readonly appName?: string | undefined;
  /** @defaultValue "debian:bookworm-slim" */
  readonly image?: string | undefined;
  /** Modal's API address; set, it becomes `MODAL_SERVER_URL`. @defaultValue the SDK's (`https://api.modal.com:443`) */
  readonly serverUrl?: string | undefined;
  readonly idleStopMs: number;
}

type Sdk = typeof import("modal");

/** Builds the Modal driver; imports the SDK. */
export async function createModalDriver(options: ModalDriverOptions): Promise<CloudSandboxDriver> {
  const sdk: Sdk = await import("modal");
  // The SDK takes its address only from MODAL_SERVER_URL (or ~/.modal.toml), read when a client is made.
  if (options.serverUrl) process.env.MODAL_SERVER_URL = options.serverUrl;
  const client = new sdk.ModalClient({ tokenId: options.tokenId, tokenSecret: options.tokenSecret });
  const app = () => client.apps.fromName(options.appName ?? "herald", { createIfMissing: true });
  const start = async (image: InstanceType<Sdk["Image"]>, tags?: Record<string, string>) => {
    const sb = await client.sandboxes.create(await app(), image, {
      idleTimeoutMs: options.idleStopMs + 5 * 60_000,
      timeoutMs: 24 * 3_600_000,
      ...(tags ? { tags } : {}),
    });
    return sb.sandboxId;
  };
  const run = async (
    id: string,
    command: string,
    onStdout: (s: string) => void,
    onStderr: (s: string) => void,
  ) => {
    const sb = await client.sandboxes.fromId(id);
    const proc = await sb.exec(["/bin/sh", "-c", command], { stdout: "pipe", stderr: "pipe" });
    await Promise.all([pump(proc.stdout, onStdout), pump(proc.stderr, onStderr)]);
    return proc.wait();
  };
  return {
    provider: "modal",
    async check() {
      await app();
    },
    create: (_name, labels) =>
      start(client.images.fromRegistry(options.image ?? "debian:bookworm-slim"), { ...labels }),
    async resume(id) {
      if (id.startsWith("im-")) return start(await client.images.fromId(id));
      const sb = await client.sandboxes.fromId(id);
      // A sandbox that ended (Modal's own timeout) is as good as gone: its files went with it.
      if ((await sb.poll()) !== null) throw new sdk.NotFoundError(`sandbox ${id} has ended`);
      return undefined;
    },
    async pause(id) {
      if (id.startsWith("im-")) return undefined;
      const sb = await client.sandboxes.fromId(id);
      const image = await sb.snapshotFilesystem();
      await sb.terminate();
      return image.imageId;
    },
    async remove(id) {
      if (!id.startsWith("im-")) await (await client.sandboxes.fromId(id)).terminate();
    },
    exec: (id, request) => run(id, request.command, request.onStdout, request.onStderr),
    stat: (id, path) => statByCommand((command, onStdout) => run(id, command, onStdout, () => {}), path),
    async readFile(id, path) {
      return (await client.sandboxes.fromId(id)).filesystem.readBytes(path);
    },
    async writeFile(id, path, data) {
      await (await client.sandboxes.fromId(id)).filesystem.writeBytes(data, path);
    },
    statusOf(err) {
      if (err instanceof sdk.NotFoundError) return 404;
      if (err instanceof sdk.ResourceExhaustedError) return 429;
      return undefined;
    },
    async close() {
      client.close();
    },
  };
}

/** Reads a text stream to its end, chunk by chunk. */
async function pump(stream: ReadableStream<string>, onChunk: (s: string) => void): Promise<void> {
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onChunk(value);
  }
}
