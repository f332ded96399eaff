/**
 * Where MCP tools' files go when the session has a workspace: into `<workspace>/mcp/` through
 * `WorkspaceAccess` (named to the model as its commands see them), with a copy in the cache that the
 * reply sends.
 */
import { posix } from "node:path";
import type { WorkspaceAccess } from "../../exec/access.js";
import { ownerOf } from "../../exec/attachments.js";
import type { FileSink } from "./content.js";
import { type McpSaveDir, mcpCacheSink } from "./tools.js";

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
