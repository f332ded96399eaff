/**
 * What the gateway's own code moves in and out of workspaces (part of the composition root): a turn's
 * attachments in, MCP tools' files in, images for `vision_analyze` and files for `send_message` out.
 * All of it goes through `WorkspaceAccess` (the backend's files, where the commands run): the gateway
 * never opens a workspace path itself, so a command swapping a folder for a link cannot steer it.
 */
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, open as openFile, rm, stat } from "node:fs/promises";
import { basename, join, posix } from "node:path";
import type { WorkspaceAccess, WorkspaceOwner } from "../agent/exec/index.js";
import type { FileSink } from "../agent/tools/mcp/index.js";
import { type McpSaveDir, mcpCacheSink } from "../agent/tools/mcp/tools.js";
import type { ToolContext } from "../agent/types.js";
import { HeraldError } from "../core/errors.js";
import type { TurnJob } from "../core/turn.js";
import { MAX_OUTBOUND_FILE_BYTES } from "../core/types.js";

/** The workspace owner of a tool call (the session, or the user when workspaces are per user). */
export function ownerOf(origin: ToolContext["origin"]): WorkspaceOwner {
  return { sessionKey: origin.sessionKey, userKey: `${origin.chat.platform}:user:${origin.userId}` };
}

/** The largest workspace file `send_message` sends (what the adapters read at most). */
const MAX_SEND_BYTES = MAX_OUTBOUND_FILE_BYTES;
/** Bytes per read when copying a file out of a workspace. */
const COPY_CHUNK_BYTES = 1024 * 1024;

/**
 * Copies `job`'s attachments into `<workspace>/attachments/` (names kept, another file of a name
 * numbered) and returns where the model finds each.
 */
export async function copyAttachments(
  access: WorkspaceAccess,
  job: TurnJob,
): Promise<ReadonlyMap<string, string>> {
  const open = await access.open(ownerOf(job.origin));
  const paths = new Map<string, string>();
  for (const attachment of job.input.attachments ?? []) {
    const name = basename(attachment.fileName ?? attachment.path).replace(/[^\w.+-]+/g, "_") || "file";
    const size = (await stat(attachment.path)).size;
    // The same file again (a turn run a second time) keeps its copy; another file of that name is numbered.
    let target = name;
    for (let n = 2; ; n++) {
      const there = await open.files.stat(`attachments/${target}`);
      if (!there || (there.kind === "file" && there.sizeBytes === size)) break;
      target = `${n}-${name}`;
    }
    const rel = `attachments/${target}`;
    // The attachment is the gateway's own file (under HERALD_HOME/cache): read here, written there.
    await open.files.write(rel, createReadStream(attachment.path), { mode: 0o644 });
    paths.set(attachment.path, open.shown(rel));
  }
  return paths;
}

/**
 * MCP files go to `<workspace>/mcp/` of the turn's session (named to the model as its commands see
 * them), with a copy in the cache that the reply sends.
 */
export function mcpWorkspaceFiles(access: WorkspaceAccess): McpSaveDir {
  return async (ctx, server): Promise<FileSink> => {
    const open = await access.open(ownerOf(ctx.origin), ctx.signal);
    const cache = mcpCacheSink(ctx.homeDir, server);
    return {
      async save(name, bytes) {
        const { path } = await cache.save(name, bytes);
        const rel = posix.join("mcp", name);
        await open.files.write(rel, bytes);
        return { path, shownAs: open.shown(rel) };
      },
    };
  };
}

/** Reads a workspace file of at most `maxBytes` for `vision_analyze`. */
export function workspaceReader(
  access: WorkspaceAccess,
): (path: string, ctx: ToolContext, maxBytes: number) => Promise<Uint8Array> {
  return async (path, ctx, maxBytes) => {
    const open = await access.open(ownerOf(ctx.origin), ctx.signal);
    const rel = open.resolve(path);
    const info = await open.files.stat(rel);
    if (info?.kind !== "file")
      throw new HeraldError(`${path} does not exist in the workspace`, { code: "not_found" });
    if (info.sizeBytes > maxBytes)
      throw new HeraldError(
        `${path} is ${info.sizeBytes} bytes, over the ${maxBytes}-byte limit for images`,
        {
          code: "invalid_input",
        },
      );
    const bytes = await open.files.read(rel, { offset: 0, length: maxBytes + 1 });
    if (bytes.byteLength > maxBytes)
      throw new HeraldError(`${path} is over the ${maxBytes}-byte limit for images`, {
        code: "invalid_input",
      });
    return bytes;
  };
}

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
