/**
 * The contract of one cloud sandbox provider (Daytona, E2B, Modal, Vercel Sandbox) behind
 * `CloudBackend`: a driver speaks its provider's SDK, and only that. Lifecycles, retries, idle pauses,
 * lost sandboxes, process groups and the workspace's files are `CloudBackend`'s.
 */
import { HeraldError } from "../../core/errors.js";
import type { FileInfo } from "./types.js";

/** The cloud providers Herald ships a driver for. */
export type CloudProviderName = "daytona" | "e2b" | "modal" | "vercel";

/** One command run to its end in a sandbox; output arrives through the callbacks, decoded as UTF-8. */
export interface CloudExecRequest {
  /** A whole shell line for `/bin/sh -c`. */
  readonly command: string;
  readonly onStdout: (chunk: string) => void;
  readonly onStderr: (chunk: string) => void;
}

/**
 * One provider, as `CloudBackend` uses it. Every method may throw the SDK's own error: the backend asks
 * `statusOf` for its HTTP status (429 is retried with backoff, 404 means the sandbox is lost).
 */
export interface CloudSandboxDriver {
  readonly provider: CloudProviderName;
  /** A cheap authenticated call (list, or get of a missing sandbox answered 404): the live check. */
  check(): Promise<void>;
  /** Creates and starts a sandbox named `name`; returns its id. */
  create(name: string, labels: Readonly<Record<string, string>>): Promise<string>;
  /**
   * Starts or resumes the sandbox `id` with its files; throws the provider's 404 when it is gone.
   * Returns the id it runs under now when that changed (Modal: a new sandbox from the snapshot).
   */
  resume(id: string): Promise<string | undefined>;
  /**
   * Pauses (or stops) the sandbox `id`, keeping its files for `resume`. Returns the id to resume from
   * when that changed (Modal: the snapshot's image).
   */
  pause(id: string): Promise<string | undefined>;
  /** Deletes the sandbox `id` and its files. */
  remove(id: string): Promise<void>;
  /** Runs `request.command` to its end; returns its exit status (128+n for a signal). */
  exec(id: string, request: CloudExecRequest): Promise<number>;
  /** The file or folder at the absolute `path`, or undefined when nothing is there. */
  stat(id: string, path: string): Promise<FileInfo | undefined>;
  /** The whole file at the absolute `path`. */
  readFile(id: string, path: string): Promise<Uint8Array>;
  /** Writes the whole file at the absolute `path` (parents made by the provider). */
  writeFile(id: string, path: string, data: Uint8Array): Promise<void>;
  /** The HTTP status of an error one of these methods threw, when it came from the provider. */
  statusOf(err: unknown): number | undefined;
  /** How long the provider asked to wait before a retry, ms (Retry-After), when it said. */
  retryAfterOf?(err: unknown): number | undefined;
  /** Releases the SDK's own connections. */
  close?(): Promise<void>;
}

/** The provider answered 404 for a sandbox Herald recorded: it was deleted behind Herald's back. */
export class SandboxLostError extends HeraldError {
  constructor(provider: CloudProviderName, id: string, cause: unknown) {
    super(`the ${provider} sandbox ${id} no longer exists`, { code: "tool_error", cause, retryable: true });
    this.name = "SandboxLostError";
  }
}
