/**
 * `HttpHandoverRemote`: the gateway's workspace store as a worker reaches it, under
 * `<HERALD_GATEWAY_URL>/internal/workspaces/`, every request with `Authorization: Bearer
 * <HERALD_GATEWAY_KEY>` (the state API's key). Blobs travel as tar (blob-tar.ts), everything else as
 * JSON. A refused connection (the gateway restarting) is tried again for `connectRetryMs`; any other
 * failure rejects with a `HeraldError` carrying the gateway's code and message.
 */
import { Readable } from "node:stream";
import { HeraldError, type HeraldErrorCode } from "../../../core/errors.js";
import { packBlobs, unpackBlobs } from "./blob-tar.js";
import type { BlobSource, CommitOutcome, GenerationHead, HandoverRemote, ManifestChanges } from "./types.js";

/** The path the gateway serves the hand-over under. */
export const HANDOVER_API_PATH = "/internal/workspaces";

/** Options of `HttpHandoverRemote`. */
export interface HttpHandoverRemoteOptions {
  /** `HERALD_GATEWAY_URL`. */
  readonly url: string;
  /** `HERALD_GATEWAY_KEY`. */
  readonly key: string;
  /** Caps of what a download may hold. */
  readonly maxBlobBytes: number;
  /** @defaultValue 120_000 */
  readonly timeoutMs?: number | undefined;
  /** @defaultValue 15_000 */
  readonly connectRetryMs?: number | undefined;
}

/** See the module comment. */
export class HttpHandoverRemote implements HandoverRemote {
  readonly #o: HttpHandoverRemoteOptions;
  readonly #base: string;

  constructor(options: HttpHandoverRemoteOptions) {
    this.#o = options;
    this.#base = `${options.url.replace(/\/+$/, "")}${HANDOVER_API_PATH}`;
  }

  async head(workspace: string, have?: number): Promise<GenerationHead> {
    const query = have === undefined ? "" : `?have=${have}`;
    return (await this.#json(`/${encodeURIComponent(workspace)}${query}`, {
      method: "GET",
    })) as GenerationHead;
  }

  async missing(sha256s: readonly string[]): Promise<string[]> {
    const out = (await this.#json("/-/blobs/missing", jsonBody({ sha256: sha256s }))) as {
      missing: string[];
    };
    return out.missing;
  }

  async upload(blobs: readonly BlobSource[]): Promise<void> {
    const body = Readable.toWeb(packBlobs(blobs)) as ReadableStream<Uint8Array>;
    await this.#json("/-/blobs", {
      method: "PUT",
      headers: { "content-type": "application/x-tar" },
      body,
      duplex: "half",
    } as RequestInit);
  }

  async download(
    sha256s: readonly string[],
    onBlob: (sha256: string, data: Buffer) => Promise<void>,
  ): Promise<void> {
    const res = await this.#send("/-/blobs/fetch", jsonBody({ sha256: sha256s }));
    if (!res.body)
      throw new HeraldError("the gateway sent no blobs", { code: "state_error", retryable: true });
    const wanted = new Set(sha256s);
    const limits = { maxBlobBytes: this.#o.maxBlobBytes, maxTotalBytes: this.#o.maxBlobBytes * 2 };
    await unpackBlobs(Readable.fromWeb(res.body as never), limits, async (sha, data) => {
      if (!wanted.delete(sha))
        throw new HeraldError(`the gateway sent a blob not asked for (${sha})`, { code: "invalid_input" });
      await onBlob(sha, data);
    });
    if (wanted.size > 0)
      throw new HeraldError(`the gateway sent ${wanted.size} blobs fewer than asked`, {
        code: "state_error",
      });
  }

  async commit(
    workspace: string,
    base: number,
    changes: ManifestChanges,
    worker: string,
  ): Promise<CommitOutcome> {
    const body = jsonBody({ base, worker, set: changes.set, removed: changes.removed });
    return (await this.#json(`/${encodeURIComponent(workspace)}/commit`, body)) as CommitOutcome;
  }

  async #json(path: string, init: RequestInit): Promise<unknown> {
    return (await this.#send(path, init)).json();
  }

  async #send(path: string, init: RequestInit): Promise<Response> {
    const deadline = Date.now() + (this.#o.connectRetryMs ?? 15_000);
    const headers = { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.#o.key}` };
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2_000)) {
      let res: Response;
      try {
        res = await fetch(this.#base + path, {
          ...init,
          headers,
          signal: AbortSignal.timeout(this.#o.timeoutMs ?? 120_000),
        });
      } catch (err) {
        const refused = (err as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
        // A streamed body cannot be sent twice.
        if (refused && !(init.body instanceof ReadableStream) && Date.now() + waitMs < deadline) {
          await new Promise((r) => setTimeout(r, waitMs));
          continue;
        }
        throw new HeraldError(
          `The gateway at HERALD_GATEWAY_URL (${this.#o.url}) could not be reached for the workspace: ${(err as Error).message}`,
          { code: "state_error", retryable: true, cause: err },
        );
      }
      if (res.ok) return res;
      throw await failure(res);
    }
  }
}

function jsonBody(value: unknown): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(value) };
}

async function failure(res: Response): Promise<HeraldError> {
  const body = (await res.json().catch(() => undefined)) as
    | { error?: { code?: string; message?: string; retryable?: boolean } }
    | undefined;
  if (res.status === 401)
    return new HeraldError(
      "The gateway refused HERALD_GATEWAY_KEY. Fix: set HERALD_GATEWAY_KEY on this worker to the gateway's value.",
      { code: "unauthorized" },
    );
  return new HeraldError(body?.error?.message ?? `the gateway answered HTTP ${res.status}`, {
    code: (body?.error?.code as HeraldErrorCode | undefined) ?? "state_error",
    retryable: body?.error?.retryable ?? res.status >= 500,
  });
}
