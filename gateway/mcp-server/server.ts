/**
 * Herald as an MCP server (on the SDK's `McpServer`): six tools over the {@link HeraldMcpPort}. Every
 * tool answers text (JSON for lists); a failure is an `isError` result whose text says the fix, never a
 * protocol error. The SDK loads with the first server built (the first `/mcp` request), not with this
 * module: a gateway nobody asks over MCP never loads it.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { HeraldMcpPort } from "./types.js";

/** Names of the tools, for docs and tests. */
export const MCP_TOOL_NAMES = [
  "sessions_list",
  "sessions_search",
  "session_read",
  "send_message",
  "cron_list",
  "cron_add",
] as const;

/** Builds a server on `port` (one per connection or request; it holds no state of its own). */
export async function createHeraldMcpServer(port: HeraldMcpPort, version: string): Promise<McpServer> {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const server = new McpServer({ name: "herald", version });
  const json = (value: unknown): CallToolResult => ({
    content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
  });
  const guarded =
    <A>(fn: (args: A) => Promise<CallToolResult> | CallToolResult) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return await fn(args);
      } catch (err) {
        return {
          isError: true,
          content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }],
        };
      }
    };

  server.registerTool(
    "sessions_list",
    {
      description: "List Herald's chat sessions, most recently active first.",
      inputSchema: {
        limit: z.number().int().min(1).max(200).default(20),
        active_only: z.boolean().default(false).describe("only sessions that have not ended"),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(({ limit, active_only }) =>
      json(
        port.listSessions({ limit, activeOnly: active_only }).map((s) => ({
          id: s.id,
          key: s.key,
          chat_type: s.chatType,
          messages: s.messageCount,
          created_at: new Date(s.createdAt).toISOString(),
          last_active_at: new Date(s.lastActiveAt).toISOString(),
          ...(s.endedAt ? { ended: s.endReason ?? true } : {}),
          ...(s.title ? { title: s.title } : {}),
        })),
      ),
    ),
  );

  server.registerTool(
    "sessions_search",
    {
      description: "Full-text search over every session's messages.",
      inputSchema: { query: z.string().min(1), limit: z.number().int().min(1).max(50).default(10) },
      annotations: { readOnlyHint: true },
    },
    guarded(({ query, limit }) =>
      json(
        port.searchSessions(query, { limit }).map((h) => ({
          session_id: h.sessionId,
          session_key: h.sessionKey,
          role: h.role,
          snippet: h.snippet,
          at: new Date(h.createdAt).toISOString(),
        })),
      ),
    ),
  );

  server.registerTool(
    "session_read",
    {
      description:
        "Read one session's messages (the most recent `limit`), by id from sessions_list or sessions_search.",
      inputSchema: { id: z.string().min(1), limit: z.number().int().min(1).max(500).default(100) },
      annotations: { readOnlyHint: true },
    },
    guarded(({ id, limit }) => {
      const found = port.readSession(id, { limit });
      if (!found)
        throw new Error(`There is no session ${id}. sessions_list and sessions_search give the ids.`);
      const lines = found.messages.map(({ message }) => {
        const calls =
          message.role === "assistant" && message.tool_calls?.length
            ? ` [tools: ${message.tool_calls.map((c) => c.function.name).join(", ")}]`
            : "";
        const content =
          typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
        return `${message.role}${calls}: ${content}`;
      });
      const s = found.session;
      return {
        content: [
          {
            type: "text",
            text: [`# ${s.key} (${s.id}, ${s.messageCount} messages)`, "", ...lines].join("\n"),
          },
        ],
      };
    }),
  );

  server.registerTool(
    "send_message",
    {
      description:
        "Send a message to a chat Herald is in, through its durable outbox (delivered once). Give an idempotency_key to make retries safe: a key seen before sends nothing again.",
      inputSchema: {
        chat: z.string().min(3).describe("platform:chatId[:threadId], e.g. telegram:123456"),
        text: z.string().min(1).max(4000),
        idempotency_key: z.string().min(1).max(200).optional(),
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    guarded(({ chat, text, idempotency_key }) => {
      const { duplicate } = port.sendMessage(chat, text, idempotency_key);
      return {
        content: [
          {
            type: "text",
            text: duplicate
              ? `Already sent with idempotency key ${idempotency_key}; nothing sent again.`
              : `Queued for ${chat}; it is delivered once.`,
          },
        ],
      };
    }),
  );

  server.registerTool(
    "cron_list",
    {
      description: "List every scheduled job (all owners), with schedule, targets and next run.",
      annotations: { readOnlyHint: true },
    },
    guarded(() => json(port.listCronJobs())),
  );

  server.registerTool(
    "cron_add",
    {
      description:
        "Add a scheduled job: the agent runs `prompt` in a fresh conversation on `schedule` and delivers the answer.",
      inputSchema: {
        schedule: z
          .string()
          .min(1)
          .describe('cron expression ("0 8 * * 1-5"), "every 2h", "30m", "in 20m" or an ISO time'),
        prompt: z.string().min(1),
        deliver: z
          .string()
          .min(1)
          .describe(
            "comma list: <platform> (its home channel), <platform>:<chat>[:<thread>], email:<address>, local",
          ),
        name: z.string().optional(),
      },
    },
    guarded(async (input) => json(await port.addCronJob(input))),
  );
  return server;
}
