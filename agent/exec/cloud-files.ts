/**
 * `CloudWorkspaceFiles`: a workspace's files through the provider's file API (stat, download, upload),
 * and one command for what the file APIs lack (keep the mode, rename into place). The sandbox holds
 * nothing but what the agent made there, so a link out of the workspace leads to no one else's files:
 * paths are checked lexically by the gateway (`workspacePath`) and not resolved again here.
 */
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { shellQuote } from "./child.js";
import { fileError } from "./files-local.js";
import type { FileInfo, WorkspaceFiles, WriteOutcome } from "./types.js";

/** The largest file read whole from the provider for one range. */
const MAX_READ_BYTES = 256 * 1024 * 1024;

/** What the files need of `CloudBackend`, bound to one workspace. */
export interface CloudFilePorts {
  stat(path: string): Promise<FileInfo | undefined>;
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  /** Runs a shell line in the sandbox; returns its exit status and stderr. */
  run(command: string): Promise<{ code: number; stderr: string }>;
  /** A notice to add to the next error (the sandbox was lost and made anew), taken once. */
  takeNotice(): string | undefined;
}

/** A workspace's files in its cloud sandbox; see the module comment. */
export class CloudWorkspaceFiles implements WorkspaceFiles {
  constructor(
    private readonly ports: CloudFilePorts,
    /** The workspace root inside the sandbox. */
    private readonly root: string,
  ) {}

  private abs(path: string): string {
    return posix.join(this.root, path);
  }

  stat(path: string): Promise<FileInfo | undefined> {
    return this.ports.stat(this.abs(path));
  }

  async read(path: string, range: { offset: number; length: number }): Promise<Uint8Array> {
    const info = await this.ports.stat(this.abs(path));
    if (!info) throw this.withNotice(fileError("ENOENT", "", path));
    if (info.kind === "directory") throw fileError("EISDIR", "", path);
    if (info.kind !== "file") throw fileError("ENOTREG", "", path);
    if (info.sizeBytes > MAX_READ_BYTES)
      throw new HeraldError(
        `${path} is ${info.sizeBytes} bytes, more than the ${MAX_READ_BYTES} a cloud sandbox's file is read at once; read it with a command (head, tail, sed -n)`,
        { code: "invalid_input" },
      );
    const whole = await this.ports.readFile(this.abs(path));
    return whole.subarray(range.offset, range.offset + range.length);
  }

  async write(
    path: string,
    data: Uint8Array | AsyncIterable<Uint8Array>,
    options: { mode?: number } = {},
  ): Promise<WriteOutcome> {
    const bytes = data instanceof Uint8Array ? data : await collect(data);
    const target = this.abs(path);
    const before = await this.ports.stat(target);
    if (before?.kind === "directory") throw fileError("EISDIR", "", path);
    const mode = (before?.mode ?? options.mode ?? 0o644) & 0o7777;
    const tmp = posix.join(
      posix.dirname(target),
      `.${posix.basename(target)}.herald.${randomBytes(4).toString("hex")}.tmp`,
    );
    await this.ports.writeFile(tmp, bytes);
    const moved = await this.ports.run(
      `chmod ${mode.toString(8)} -- ${shellQuote(tmp)} && mv -f -- ${shellQuote(tmp)} ${shellQuote(target)} || { rm -f -- ${shellQuote(tmp)}; exit 1; }`,
    );
    if (moved.code !== 0) throw fileError(undefined, moved.stderr.trim() || `exit ${moved.code}`, path);
    return { created: !before, previousBytes: before?.sizeBytes ?? 0, writtenBytes: bytes.length };
  }

  private withNotice(err: HeraldError): HeraldError {
    const notice = this.ports.takeNotice();
    return notice ? new HeraldError(`${err.message}. ${notice}`, { code: err.code }) : err;
  }
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}
