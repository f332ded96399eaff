/**
 * What a chat client (the terminal UI, in-process or over the API server's `/v1/herald/*` routes) may
 * read about its own chat besides the messages: the commands it can complete, the status line, the
 * chat's sessions and the current session's history. The gateway's composition root implements it on
 * its state; the wire schemas are here so the client checks what it reads at its boundary.
 */
import { z } from "zod";
import type { ChatRef, CommandMenuEntry } from "../../core/types.js";

/** The status line of one chat: model, this session's tokens and cost, context used, what runs. */
export interface ChatStatus {
  /** The model the session's next turn uses (`provider/model` or the endpoint's model name). */
  model: string;
  /** The active session of the chat; undefined before its first message. */
  session?: { id: string; title?: string | undefined; messageCount: number } | undefined;
  /** Tokens of the session's model calls; `costUsd` undefined when no model used has a price. */
  usage: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens: number;
    costUsd?: number | undefined;
  };
  /** Estimated tokens of the session's history, and the model's context window. */
  context: { usedTokens: number; windowTokens: number };
  /** This chat's turns: running (0 or 1) and waiting behind it. */
  turns: { running: number; waiting: number };
  /** The whole queue: jobs waiting, jobs running, worker processes (1 on the embedded queue). */
  queue: { waiting: number; active: number; workers: number };
}

/** One of the chat's sessions, newest activity first; `n` is what `/resume <n>` takes. */
export interface ChatSessionSummary {
  n: number;
  id: string;
  title?: string | undefined;
  /** Epoch ms. */
  lastActiveAt: number;
  messageCount: number;
  /** The active session (the one new messages go to). */
  current: boolean;
}

/** One line of a session's history as a transcript shows it: a message's text, or a tool call. */
export interface ChatHistoryEntry {
  role: "user" | "assistant" | "tool";
  text: string;
}

/**
 * The chat port. Implementations read state only; none of them changes anything. `status` is async
 * (the queue's figures may come from Redis); the others read SQLite at once.
 */
export interface ChatPort {
  /** The commands the chat's user may run (an owner's: the terminal and API callers are owners). */
  commands(): CommandMenuEntry[];
  status(chat: ChatRef): Promise<ChatStatus>;
  /** The chat's sessions (at most 10, as `/sessions` lists them). */
  sessions(chat: ChatRef): ChatSessionSummary[];
  /** The last `limit` entries of the chat's active session (empty without one). */
  history(chat: ChatRef, limit: number): ChatHistoryEntry[];
}

/** `GET /v1/herald/commands`. */
export const commandsBodySchema = z.object({
  commands: z.array(z.object({ name: z.string(), description: z.string() })),
});

/** `GET /v1/herald/status`. */
export const chatStatusSchema = z.object({
  model: z.string(),
  session: z.object({ id: z.string(), title: z.string().optional(), messageCount: z.number() }).optional(),
  usage: z.object({
    promptTokens: z.number(),
    completionTokens: z.number(),
    cachedTokens: z.number(),
    costUsd: z.number().optional(),
  }),
  context: z.object({ usedTokens: z.number(), windowTokens: z.number() }),
  turns: z.object({ running: z.number(), waiting: z.number() }),
  queue: z.object({ waiting: z.number(), active: z.number(), workers: z.number() }),
});

/** `GET /v1/herald/sessions`. */
export const sessionsBodySchema = z.object({
  sessions: z.array(
    z.object({
      n: z.number(),
      id: z.string(),
      title: z.string().optional(),
      lastActiveAt: z.number(),
      messageCount: z.number(),
      current: z.boolean(),
    }),
  ),
});

/** `GET /v1/herald/history`. */
export const historyBodySchema = z.object({
  messages: z.array(z.object({ role: z.enum(["user", "assistant", "tool"]), text: z.string() })),
});

/**
 * The extra events of a streamed completion whose request asked for them (`"herald_events": true`),
 * sent as named SSE events (`event: herald.tool`) beside OpenAI's unnamed chunks.
 */
export const heraldEventSchemas = {
  "herald.tool": z.object({ line: z.string(), callId: z.string().optional() }),
  "herald.tool_end": z.object({
    callId: z.string(),
    ok: z.boolean(),
    durationMs: z.number(),
    result: z.string().optional(),
  }),
  "herald.buttons": z.object({
    buttons: z.array(z.array(z.object({ label: z.string(), data: z.string() }))),
  }),
} as const;
