/**
 * The MCP tools: one `mcp_<server>_<tool>` per tool of each connected server (toolset `mcp_<server>`),
 * and `mcp_list_resources`, `mcp_read_resource`, `mcp_get_prompt` (toolset `mcp`) over every server
 * the turn may use: it serves the turn's chat and the gateway gave the turn its toolset (an `access:
 * owners` server's only to a turn that acts for an owner). A call to a server that is down fails at
 * once with a clear error. `mcp_list_resources` without a server asks only the running servers and
 * names the idle ones (it never starts a server the model did not name).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext, ToolOutput } from "../../types.js";
import { mcpToolset, serverServes } from "./config.js";
import { convertResult, type FileSink } from "./content.js";
import type { McpManager } from "./manager.js";
import { cleanInputSchema, modelToolName } from "./schema.js";
import type { McpServerHandle } from "./types.js";

/** The toolset of the resource and prompt tools. */
export const MCP_UTILITY_TOOLSET = "mcp";

const anyObject = z.record(z.string(), z.unknown());

/**
 * Where a call's images and binary resources are saved (named in the result, sent with the reply):
 * a copy on this host for the reply, and the name the model is given (e.g. the sandbox's
 * `/workspace/mcp/…`).
 */
export type McpSaveDir = (ctx: ToolContext, server: string) => Promise<FileSink>;

/** A sink into `HERALD_HOME/cache/mcp/<server>/`: the model is given the cached file's path. */
export function mcpCacheSink(homeDir: string, server: string): FileSink {
  const dir = join(homeDir, "cache", "mcp", server);
  return {
    async save(name, bytes) {
      await mkdir(dir, { recursive: true });
      const path = join(dir, name);
      await writeFile(path, bytes);
      return { path, shownAs: path };
    },
  };
}

/** @defaultValue of `McpSaveDir`: the cache (`mcpCacheSink`). */
const cacheDir: McpSaveDir = async (ctx, server) => mcpCacheSink(ctx.homeDir, server);

/** `saveDir` for this call, resolved only when a result has a file; the cache when it fails. */
function saveTo(ctx: ToolContext, server: string, saveDir: McpSaveDir) {
  return async () => {
    try {
      return await saveDir(ctx, server);
    } catch (err) {
      ctx.logger.warn({ err: String(err) }, "mcp files go to the cache instead of the workspace");
      return cacheDir(ctx, server);
    }
  };
}

/** The model's tools for `server`'s current tool list (empty while it has never connected). */
export function mcpServerTools(server: McpServerHandle, saveDir: McpSaveDir = cacheDir): Tool[] {
  const seen = new Set<string>();
  const tools: Tool[] = [];
  for (const info of server.tools()) {
    const name = modelToolName(info.server, info.name);
    if (seen.has(name)) continue;
    seen.add(name);
    tools.push(
      defineTool({
        name,
        description: `${info.description} (MCP server ${info.server})`.slice(0, 1024),
        toolset: mcpToolset(info.server),
        parameters: anyObject,
        jsonSchema: cleanInputSchema(info.inputSchema),
        label: () => `🔌 ${info.server}: ${info.name}`,
        async execute(args, ctx): Promise<ToolOutput> {
          const result = await server.callTool(info.name, args, {
            signal: ctx.signal,
            onProgress: (line) => ctx.progress(line),
          });
          const converted = await convertResult(result, saveTo(ctx, info.server, saveDir));
          return {
            content: converted.isError ? `error: ${converted.text}` : converted.text,
            isError: converted.isError,
            ...(converted.files.length > 0 ? { files: converted.files } : {}),
          };
        },
      }),
    );
  }
  return tools;
}

/** The servers the turn of `ctx` may reach: they serve its chat, and the turn has their toolset. */
function usableServers(manager: McpManager, ctx: ToolContext): McpServerHandle[] {
  return manager
    .servers()
    .filter(
      (s) =>
        serverServes(s.config, ctx.origin.chat.platform, ctx.origin.chatType) &&
        (ctx.turn?.toolsets.includes(mcpToolset(s.config.name)) ?? true),
    );
}

/** The server `name` if the turn of `ctx` may reach it, or an error text naming the ones it may. */
function serverFor(manager: McpManager, name: string, ctx: ToolContext): McpServerHandle | string {
  const usable = usableServers(manager, ctx);
  const found = usable.find((s) => s.config.name === name);
  if (found) return found;
  return `error: there is no MCP server '${name}' here. Servers: ${usable.map((s) => s.config.name).join(", ") || "none"}.`;
}

/** `mcp_list_resources`, `mcp_read_resource`, `mcp_get_prompt` over `manager`'s servers. */
export function mcpUtilityTools(manager: McpManager, saveDir: McpSaveDir = cacheDir): Tool[] {
  return [
    defineTool({
      name: "mcp_list_resources",
      description:
        "List the resources (files, documents, data) that MCP servers offer; read one with mcp_read_resource.",
      toolset: MCP_UTILITY_TOOLSET,
      parameters: z.object({
        server: z
          .string()
          .optional()
          .describe("only this server, started if idle (default: every running server)"),
      }),
      async execute({ server }, ctx) {
        // Unnamed, the listing asks only the running servers: starting every idle one to list them
        // would undo starting on first use. The idle ones are named, so the model can ask one.
        const usable = server ? [] : usableServers(manager, ctx);
        const idle = usable.filter((s) => s.status().state === "idle").map((s) => s.config.name);
        const names = server ? [server] : usable.map((s) => s.config.name).filter((n) => !idle.includes(n));
        const sections: string[] = [];
        for (const name of names) {
          const handle = serverFor(manager, name, ctx);
          if (typeof handle === "string") return handle;
          try {
            const resources = await handle.listResources({ signal: ctx.signal });
            sections.push(
              `## ${name}\n${
                resources
                  .slice(0, 100)
                  .map(
                    (r) =>
                      `- ${r.uri} (${r.name}${r.mimeType ? `, ${r.mimeType}` : ""})${r.description ? `: ${r.description}` : ""}`,
                  )
                  .join("\n") || "(no resources)"
              }${resources.length > 100 ? `\n… ${resources.length - 100} more` : ""}`,
            );
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            sections.push(`## ${name}\nerror: ${(err as Error).message}`);
          }
        }
        if (idle.length) {
          sections.push(
            `not started: ${idle.join(", ")} — name one as server to start it and list its resources`,
          );
        }
        return sections.join("\n\n") || "No MCP servers are configured for this chat.";
      },
    }),
    defineTool({
      name: "mcp_read_resource",
      description:
        "Read one resource of an MCP server by its URI (from mcp_list_resources or a resource link).",
      toolset: MCP_UTILITY_TOOLSET,
      parameters: z.object({ server: z.string(), uri: z.string().min(1) }),
      async execute({ server, uri }, ctx): Promise<ToolOutput | string> {
        const handle = serverFor(manager, server, ctx);
        if (typeof handle === "string") return { content: handle, isError: true };
        const contents = await handle.readResource(uri, { signal: ctx.signal });
        const converted = await convertResult(
          {
            content: contents.map((c) => ({
              type: "resource" as const,
              resource:
                c.text !== undefined
                  ? { uri: c.uri, text: c.text, ...(c.mimeType ? { mimeType: c.mimeType } : {}) }
                  : { uri: c.uri, blob: c.blob ?? "", ...(c.mimeType ? { mimeType: c.mimeType } : {}) },
            })),
          },
          saveTo(ctx, server, saveDir),
        );
        return { content: converted.text, ...(converted.files.length ? { files: converted.files } : {}) };
      },
    }),
    defineTool({
      name: "mcp_get_prompt",
      description:
        "Get a prompt template of an MCP server filled with arguments; without a name, lists the server's prompts.",
      toolset: MCP_UTILITY_TOOLSET,
      parameters: z.object({
        server: z.string(),
        name: z.string().optional(),
        arguments: z.record(z.string(), z.string()).optional(),
      }),
      async execute({ server, name, arguments: args }, ctx): Promise<ToolOutput | string> {
        const handle = serverFor(manager, server, ctx);
        if (typeof handle === "string") return { content: handle, isError: true };
        if (!name) {
          const prompts = await handle.listPrompts({ signal: ctx.signal });
          return (
            prompts
              .map(
                (p) =>
                  `- ${p.name}${p.arguments.length ? `(${p.arguments.join(", ")})` : ""}${p.description ? `: ${p.description}` : ""}`,
              )
              .join("\n") || `${server} has no prompts.`
          );
        }
        const prompt = await handle.getPrompt(name, args ?? {}, { signal: ctx.signal });
        const lines = prompt.messages.map((m) => {
          const c = m.content as { type?: string; text?: string };
          return `${m.role}: ${c.type === "text" ? c.text : `[${c.type ?? "content"}]`}`;
        });
        return [prompt.description, ...lines].filter(Boolean).join("\n\n");
      },
    }),
  ];
}
