/**
 * Mem0's platform API (hosted at api.mem0.ai, or a server that speaks it), as `mem0ai` 3.3's
 * `MemoryClient` speaks it: `POST /v3/memories/add/` with the exchange as two messages and the entity
 * ids at the top level (`user_id` the Herald user, `agent_id` the assistant, `run_id` the session key,
 * `app_id` when set), `POST /v3/memories/search/` with `filters: { AND: [{ user_id }, { agent_id }] }`,
 * and `GET /v1/ping/` for the doctor. Each further agent (`agents:`) is an `agent_id` of its own,
 * `<agent_id>-<agent>`, and reads only its own memories of a user. `Authorization: Token <key>`. Plain `fetch`: the SDK pulls in a large dependency tree
 * and telemetry that Herald does not need to send two kinds of request.
 */
import { describeError } from "../../../core/errors.js";
import { joinUrl, requestJson } from "./http.js";
import { agentScoped, sessionIdOf, userPeerId } from "./ids.js";
import { type MemoryProvider, MemoryProviderError, type ProviderUser } from "./types.js";

/** What a Mem0 provider needs. */
export interface Mem0ProviderConfig {
  baseUrl: string;
  apiKey?: string | undefined;
  /** The default agent's `agent_id` (a further agent's: `<agent_id>-<agent>`). */
  agentId: string;
  /** Sent as `app_id` when set. */
  appId?: string | undefined;
  timeoutMs: number;
}

/** The search whose best matches become the prompt's note about the user. */
const INSIGHTS_QUERY = "who the user is, their preferences, background and ongoing projects";
const INSIGHTS_TOP_K = 8;
const QUERY_TOP_K = 10;
const MESSAGE_CHARS = 20_000;

/** A memory as the search answers it (only what Herald reads). */
interface FoundMemory {
  memory?: unknown;
  user_id?: unknown;
  agent_id?: unknown;
}

/** Builds the Mem0 provider. */
export function createMem0Provider(config: Mem0ProviderConfig): MemoryProvider {
  const headers: Record<string, string> = config.apiKey ? { authorization: `Token ${config.apiKey}` } : {};
  const call = (method: "GET" | "POST", path: string, body: unknown, signal: AbortSignal) =>
    requestJson("mem0", {
      method,
      url: joinUrl(config.baseUrl, path),
      headers,
      body,
      signal,
      timeoutMs: config.timeoutMs,
    });
  const search = async (user: ProviderUser, query: string, topK: number, signal: AbortSignal) => {
    const userId = userPeerId(user.platform, user.userId);
    const agentId = agentScoped(config.agentId, user.agent);
    const filters = { AND: [{ user_id: userId }, { agent_id: agentId }] };
    const answer = (await call(
      "POST",
      "/v3/memories/search/",
      { query, output_format: "v1.1", top_k: topK, filters },
      signal,
    )) as { results?: FoundMemory[] } | FoundMemory[] | undefined;
    const results = Array.isArray(answer) ? answer : (answer?.results ?? []);
    // Only this user's memories of this agent, whatever the server's filter did.
    return results
      .filter((m) => m.user_id === undefined || m.user_id === userId)
      .filter((m) => m.agent_id === undefined || m.agent_id === agentId)
      .map((m) => (typeof m.memory === "string" ? m.memory.replace(/\s+/g, " ").trim() : ""))
      .filter(Boolean);
  };
  return {
    name: "mem0",
    async addExchange(exchange, signal) {
      await call(
        "POST",
        "/v3/memories/add/",
        {
          messages: [
            { role: "user", content: exchange.userText.slice(0, MESSAGE_CHARS) },
            { role: "assistant", content: exchange.replyText.slice(0, MESSAGE_CHARS) },
          ],
          user_id: userPeerId(exchange.platform, exchange.userId),
          agent_id: agentScoped(config.agentId, exchange.agent),
          run_id: sessionIdOf(exchange.sessionKey),
          ...(config.appId ? { app_id: config.appId } : {}),
          metadata: {
            platform: exchange.platform,
            chat_type: exchange.chatType,
            herald_session_key: exchange.sessionKey,
            herald_turn_id: exchange.turnId,
          },
          timestamp: Math.floor(exchange.at / 1000),
        },
        signal,
      );
    },
    async insights(user, signal) {
      const found = await search(user, INSIGHTS_QUERY, INSIGHTS_TOP_K, signal);
      return found.length ? found.map((m) => `- ${m}`).join("\n") : undefined;
    },
    async query(user, question, signal) {
      const found = await search(user, question, QUERY_TOP_K, signal);
      return found.map((m) => `- ${m}`).join("\n");
    },
    async check(signal) {
      try {
        const answer = (await call("GET", "/v1/ping/", undefined, signal)) as
          | { status?: unknown }
          | undefined;
        if (answer?.status !== "ok")
          throw new MemoryProviderError("mem0", "mem0: GET /v1/ping/ did not answer status ok", {});
        return { ok: true, text: `mem0: reachable, key accepted (${config.baseUrl})` };
      } catch (err) {
        return {
          ok: false,
          text: `${err instanceof MemoryProviderError ? err.message : `mem0: ${describeError(err)}`} (${config.baseUrl})`,
        };
      }
    },
  };
}
