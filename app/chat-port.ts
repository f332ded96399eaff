/**
 * The chat port on the gateway's state (part of the composition root): what `herald chat` shows beside
 * the messages, in-process or through the API server's `/v1/herald/*` routes.
 */

import type { ChatHistoryEntry, ChatPort, ChatSessionSummary, ChatStatus } from "../adapters/shared/index.js";
import { estimateTokens, summarizeArguments } from "../agent/index.js";
import type { ProviderCatalog } from "../agent/providers/index.js";
import { sessionKey } from "../core/chat.js";
import type { JobQueue } from "../core/turn.js";
import type { ChatRef } from "../core/types.js";
import type { GatewayRunner } from "../gateway/index.js";
import type { Session, SqliteState } from "../sessions/index.js";

export interface ChatPortDeps {
  state: SqliteState;
  runner: GatewayRunner;
  queue: JobQueue;
  catalog: ProviderCatalog;
  /** The model a session key's next turn runs on. */
  modelOf: (sessionKey: string) => string;
}

/** Sessions `/sessions` lists, and so `sessions()`. */
const LISTED = 10;

/** Builds the chat port. Chats are direct chats of their platform (the terminal's, the API's). */
export function createChatPort(deps: ChatPortDeps): ChatPort {
  const { state, runner, catalog } = deps;
  const keyOf = (chat: ChatRef) => sessionKey({ chat, chatType: "dm", userId: chat.chatId });
  const ofKey = (key: string): Session[] =>
    state.sessions
      .list({ keyPrefix: key, limit: 500 })
      .filter((s) => s.key === key)
      .slice(0, LISTED);
  const active = (key: string) => ofKey(key).find((s) => s.endedAt === undefined);

  return {
    commands: () => runner.commands.menu({ isOwner: true }),

    async status(chat): Promise<ChatStatus> {
      const key = keyOf(chat);
      const session = active(key);
      const model = deps.modelOf(key);
      const usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 } as ChatStatus["usage"];
      let cost: number | undefined;
      for (const line of session ? state.usage.forSession(session.id) : []) {
        usage.promptTokens += line.promptTokens;
        usage.completionTokens += line.completionTokens;
        usage.cachedTokens += line.cachedTokens;
        const c = catalog.costOf(line);
        if (c !== undefined) cost = (cost ?? 0) + c;
      }
      if (cost !== undefined) usage.costUsd = cost;
      const history = session ? state.sessions.load(session.id).map((m) => m.message) : [];
      const open = runner.control.openTurns(key);
      const running = open.filter((t) => t.status === "running").length;
      return {
        model,
        ...(session
          ? {
              session: {
                id: session.id,
                ...(session.title ? { title: session.title } : {}),
                messageCount: session.messageCount,
              },
            }
          : {}),
        usage,
        context: { usedTokens: estimateTokens(history), windowTokens: catalog.contextTokens(model) },
        turns: { running, waiting: open.length - running },
        queue: await deps.queue.stats(),
      };
    },

    sessions(chat): ChatSessionSummary[] {
      return ofKey(keyOf(chat)).map((s, i) => ({
        n: i + 1,
        id: s.id,
        ...(s.title ? { title: s.title } : {}),
        lastActiveAt: s.lastActiveAt,
        messageCount: s.messageCount,
        current: s.endedAt === undefined,
      }));
    },

    history(chat, limit): ChatHistoryEntry[] {
      const session = active(keyOf(chat));
      if (!session) return [];
      const entries: ChatHistoryEntry[] = [];
      for (const { message } of state.sessions.load(session.id)) {
        if (message.role === "user") entries.push({ role: "user", text: message.content });
        else if (message.role === "assistant") {
          if (message.content) entries.push({ role: "assistant", text: message.content });
          for (const call of message.tool_calls ?? [])
            entries.push({
              role: "tool",
              text: `⚙️ ${call.function.name}: ${summarizeArguments(call.function.arguments)}`,
            });
        }
      }
      return entries.slice(-limit);
    },
  };
}
