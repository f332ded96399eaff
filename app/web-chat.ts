/**
 * The web chat's services on the gateway's state (part of the composition root): the owner's login
 * secrets, owners and admission through the runner's access policy and the pairing store, the chat
 * port's sessions and status, paged history and FTS5 search limited to the user's own chat.
 */

import type { ChatPort } from "../adapters/shared/index.js";
import type { WebChatServices, WebHistoryEntry } from "../adapters/webchat/types.js";
import { summarizeArguments } from "../agent/index.js";
import { isLoopbackHost } from "../agent/tools/web/gateway.js";
import { sessionKey } from "../core/chat.js";
import type { ChatRef } from "../core/types.js";
import { type GatewayRunner, turnIdFor } from "../gateway/index.js";
import type { SqliteState } from "../sessions/index.js";
import type { HeraldConfig } from "./config.js";

/** Builds the web chat's services. */
export function createWebChatServices(
  config: HeraldConfig,
  parts: { state: SqliteState; runner: GatewayRunner; chat: ChatPort },
): WebChatServices {
  const { state, runner, chat } = parts;
  const keyOf = (c: ChatRef) => sessionKey({ chat: c, chatType: "dm", userId: c.chatId });
  const active = (key: string) =>
    state.sessions.list({ keyPrefix: key, limit: 50 }).find((s) => s.key === key && s.endedAt === undefined);
  return {
    secrets: [config.dashboard.password, config.apiServer.key].filter((s): s is string => Boolean(s)),
    loopbackServer: isLoopbackHost(config.apiServer.host),
    voiceNotes: Boolean(config.voice.stt),
    chat,
    commands: (userId) => runner.commands.menu({ isOwner: runner.access.isOwner("webchat", userId) }),
    isOwner: (userId) => runner.access.isOwner("webchat", userId),
    admit: (userId) => state.pairing.allow("webchat", userId),
    turnIdOf: (messageId) => turnIdFor("webchat", messageId),
    activeSession: (c) => active(keyOf(c))?.id,
    history(c, { beforeSeq, limit }) {
      const session = active(keyOf(c));
      if (!session) return { entries: [], more: false };
      const entries: WebHistoryEntry[] = [];
      for (const { seq, message, turnId } of state.sessions.load(session.id)) {
        if (beforeSeq !== undefined && seq >= beforeSeq) break;
        const t = turnId ? { turnId } : {};
        if (message.role === "user") entries.push({ seq, role: "user", text: message.content, ...t });
        else if (message.role === "assistant") {
          if (message.content) entries.push({ seq, role: "assistant", text: message.content, ...t });
          for (const call of message.tool_calls ?? [])
            entries.push({
              seq,
              role: "tool",
              text: `${call.function.name}: ${summarizeArguments(call.function.arguments)}`,
              ...t,
            });
        }
      }
      // A page starts at a message's first entry (a reply and its tool calls share a seq), so the next
      // page, before that seq, misses nothing.
      let start = Math.max(0, entries.length - limit);
      while (start > 0 && entries[start - 1]!.seq === entries[start]!.seq) start--;
      const page = entries.slice(start);
      return {
        sessionId: session.id,
        ...(session.title ? { title: session.title } : {}),
        entries: page,
        more: entries.length > page.length,
      };
    },
    search(c, query, limit) {
      const listed = chat.sessions(c);
      const key = keyOf(c);
      const hits = state.sessions
        .search(query, { keyPrefix: key, limit })
        .filter((h) => h.sessionKey === key);
      return hits.map((hit) => ({
        sessionId: hit.sessionId,
        snippet: hit.snippet,
        createdAt: hit.createdAt,
        n: listed.find((s) => s.id === hit.sessionId)?.n,
      }));
    },
  };
}
