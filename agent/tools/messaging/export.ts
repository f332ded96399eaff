/**
 * Files `send_message` sends out of the session's workspace: read through `WorkspaceAccess` (where the
 * commands run) into a file of the gateway's own that the outbox sends later.
 */
import { mkdir, mkdtemp, open as openFile, rm } from "node:fs/promises";
import { join, posix } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import { MAX_OUTBOUND_FILE_BYTES } from "../../../core/types.js";
import { ownerOf, type WorkspaceAccess } from "../../exec/index.js";
import type { ToolContext } from "../../types.js";

/** The largest workspace file `send_message` sends (what the adapters read at most). */
const MAX_SEND_BYTES = MAX_OUTBOUND_FILE_BYTES;
/** Bytes per read when copying a file out of a workspace. */
const COPY_CHUNK_BYTES = 1024 * 1024;

/**
 * Copies a workspace file for `send_message` into `HERALD_HOME/cache/outgoing/` (a folder of its own
 * per call), which the outbox sends: what is sent is what was read in the workspace, not whatever the
 * path leads to at delivery.
 */
export function workspaceExporter(
  access: WorkspaceAccess,
  cacheDir: string,
): (path: string, ctx: ToolContext) => Promise<{ path: string; fileName: string }> {
  return async (path, ctx) => {
    const open = await access.open(ownerOf(ctx.origin), ctx.signal);
    const rel = open.resolve(path);
    const info = await open.files.stat(rel);
    if (info?.kind !== "file")
      throw new HeraldError(`${path} does not exist in the workspace (or is a folder)`, {
        code: "not_found",
      });
    if (info.sizeBytes > MAX_SEND_BYTES)
      throw new HeraldError(
        `${path} is ${(info.sizeBytes / 1024 / 1024).toFixed(1)} MB; files sent to a chat are at most ${MAX_SEND_BYTES / 1024 / 1024} MB: compress or split it, or send where to find it`,
        { code: "invalid_input" },
      );
    const outgoing = join(cacheDir, "outgoing");
    await mkdir(outgoing, { recursive: true, mode: 0o700 });
    const dir = await mkdtemp(join(outgoing, "send-"));
    const fileName = posix.basename(rel);
    const copy = join(dir, fileName);
    const handle = await openFile(copy, "wx", 0o600);
    try {
      // Read to the end, not to the size seen by stat: a file that grew meanwhile is cut at the limit.
      for (let total = 0; ; ) {
        ctx.signal.throwIfAborted();
        const chunk = await open.files.read(rel, { offset: total, length: COPY_CHUNK_BYTES });
        total += chunk.byteLength;
        if (total > MAX_SEND_BYTES)
          throw new HeraldError(`${path} grew past the ${MAX_SEND_BYTES}-byte limit for sending`, {
            code: "invalid_input",
          });
        await handle.write(chunk);
        if (chunk.byteLength < COPY_CHUNK_BYTES) break;
      }
    } catch (err) {
      await handle.close();
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    await handle.close();
    return { path: copy, fileName };
  };
}
