/**
 * Honcho (plastic-labs) over its REST API v3, as `@honcho-ai/sdk` 2.5 speaks it: a workspace
 * (`POST /v3/workspaces`, get-or-create), peers (`POST /v3/workspaces/{w}/peers`), sessions with their
 * peers (`POST /v3/workspaces/{w}/sessions`), messages (`POST …/sessions/{s}/messages`) and the
 * dialectic endpoint (`POST …/peers/{p}/chat`) for what Honcho has concluded about a peer. Each Herald
 * user is a peer of their own (`userPeerId`: platform and user id), the assistant one more peer that
 * Honcho does not model (`observe_me: false`), and each Herald session key a Honcho session. Each
 * further agent (`agents:`) has a workspace of its own, `<workspace>-<agent>`, with its assistant peer
 * `<assistant_peer>-<agent>`: Honcho's conclusions about a user there come only from what the user
 * told that agent. Plain `fetch` with the SDK's wire format, bearer key in `Authorization`.
 */
import { describeError } from "../../../core/errors.js";
import { joinUrl, requestJson } from "./http.js";
import { agentScoped, sessionIdOf, userPeerId } from "./ids.js";
import { type Exchange, type MemoryProvider, MemoryProviderError, type ProviderUser } from "./types.js";

/** What a Honcho provider needs. */
export interface HonchoProviderConfig {
  baseUrl: string;
  apiKey?: string | undefined;
  /** The workspace the default agent's peers and sessions live in (a further agent's: `<workspace>-<agent>`). */
  workspace: string;
  /** The default agent's peer id (a further agent's: `<assistant_peer>-<agent>`). */
  assistantPeer: string;
  /** One request's time limit. */
  timeoutMs: number;
}

/** The question whose answer becomes the prompt's note about the user. */
const INSIGHTS_QUESTION =
  "In at most five short bullet points: what should an assistant know about this person to help them well (who they are, preferences, ongoing projects, how they like answers)? Answer only with facts you have; say nothing if you have none.";

/** A message longer than this is cut before it is sent (Honcho limits a message's size). */
const MESSAGE_CHARS = 20_000;

/** Honcho's calls, remembering what this process already made sure exists (get-or-create is idempotent). */
class HonchoApi {
  readonly #config: HonchoProviderConfig;
  readonly #headers: Record<string, string>;
  readonly ws: string;
  readonly assistantPeer: string;
  #workspaceReady: Promise<unknown> | undefined;
  readonly #peers = new Set<string>();
  readonly #sessions = new Set<string>();

  constructor(config: HonchoProviderConfig) {
    this.#config = config;
    this.#headers = config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {};
    this.ws = encodeURIComponent(config.workspace);
    this.assistantPeer = config.assistantPeer;
  }

  call(method: "GET" | "POST", path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    return requestJson("honcho", {
      method,
      url: joinUrl(this.#config.baseUrl, path),
      headers: this.#headers,
      body,
      signal,
      timeoutMs: this.#config.timeoutMs,
    });
  }

  /** Forgets what was made: the next call makes it again (after a 404, for the doctor). */
  forget(): void {
    this.#workspaceReady = undefined;
    this.#peers.clear();
    this.#sessions.clear();
  }

  async workspace(signal: AbortSignal): Promise<void> {
    this.#workspaceReady ??= this.call("POST", "/v3/workspaces", { id: this.#config.workspace }, signal);
    try {
      await this.#workspaceReady;
    } catch (err) {
      this.#workspaceReady = undefined;
      throw err;
    }
  }

  async peer(id: string, configuration: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    if (this.#peers.has(id)) return;
    await this.call("POST", `/v3/workspaces/${this.ws}/peers`, { id, configuration }, signal);
    this.#peers.add(id);
  }

  /** The exchange's session with the user's and the assistant's peers in it; its id. */
  async session(exchange: Exchange, peer: string, signal: AbortSignal): Promise<string> {
    const id = sessionIdOf(exchange.sessionKey);
    const known = `${id}\u0000${peer}`;
    if (this.#sessions.has(known)) return id;
    await this.call(
      "POST",
      `/v3/workspaces/${this.ws}/sessions`,
      {
        id,
        metadata: { herald_session_key: exchange.sessionKey, platform: exchange.platform },
        peers: { [peer]: {}, [this.#config.assistantPeer]: { observe_me: false } },
      },
      signal,
    );
    this.#sessions.add(known);
    return id;
  }

  /** The dialectic's answer about `user` (empty when Honcho knows nothing of them). */
  async chat(user: ProviderUser, query: string, reasoning: string, signal: AbortSignal): Promise<string> {
    await this.workspace(signal);
    const peer = encodeURIComponent(userPeerId(user.platform, user.userId));
    const body = { query, stream: false, reasoning_level: reasoning };
    const answer = (await this.call(
      "POST",
      `/v3/workspaces/${this.ws}/peers/${peer}/chat`,
      body,
      signal,
    ).catch((err: unknown) => {
      // A user Honcho has never heard of has nothing to tell yet.
      if (err instanceof MemoryProviderError && err.status === 404) return { content: null };
      throw err;
    })) as { content?: unknown } | undefined;
    return typeof answer?.content === "string" ? answer.content.trim() : "";
  }
}

/** The two messages of an exchange as Honcho takes them. */
function messagesOf(exchange: Exchange, peer: string, assistant: string) {
  const createdAt = new Date(exchange.at).toISOString();
  const metadata = { herald_turn_id: exchange.turnId, chat_type: exchange.chatType };
  return {
    messages: [
      { peer_id: peer, content: exchange.userText.slice(0, MESSAGE_CHARS), metadata, created_at: createdAt },
      {
        peer_id: assistant,
        content: exchange.replyText.slice(0, MESSAGE_CHARS),
        metadata,
        created_at: createdAt,
      },
    ],
  };
}

/** Builds the Honcho provider. */
export function createHonchoProvider(config: HonchoProviderConfig): MemoryProvider {
  // One workspace (and its assistant peer) per agent, each remembering what it made.
  const apis = new Map<string, HonchoApi>();
  const apiOf = (agent: string | undefined) => {
    const key = agent ?? "";
    let api = apis.get(key);
    if (!api) {
      api = new HonchoApi({
        ...config,
        workspace: agentScoped(config.workspace, agent),
        assistantPeer: agentScoped(config.assistantPeer, agent),
      });
      apis.set(key, api);
    }
    return api;
  };
  return {
    name: "honcho",
    async addExchange(exchange, signal) {
      const api = apiOf(exchange.agent);
      await api.workspace(signal);
      const peer = userPeerId(exchange.platform, exchange.userId);
      await api.peer(peer, {}, signal);
      await api.peer(api.assistantPeer, { observe_me: false }, signal);
      const session = await api.session(exchange, peer, signal);
      const path = `/v3/workspaces/${api.ws}/sessions/${encodeURIComponent(session)}/messages`;
      try {
        await api.call("POST", path, messagesOf(exchange, peer, api.assistantPeer), signal);
      } catch (err) {
        if (!(err instanceof MemoryProviderError) || err.status !== 404) throw err;
        // The session (or workspace) went away on the server: it is made again on the next try.
        api.forget();
        throw new MemoryProviderError("honcho", `${err.message}; the session is made again next time`, {
          cause: err,
        });
      }
    },
    async insights(user, signal) {
      return (await apiOf(user.agent).chat(user, INSIGHTS_QUESTION, "minimal", signal)) || undefined;
    },
    query: (user, question, signal) => apiOf(user.agent).chat(user, question, "low", signal),
    async check(signal) {
      const where = `${config.baseUrl}, workspace ${config.workspace}`;
      const api = apiOf(undefined);
      try {
        api.forget();
        await api.workspace(signal);
        return { ok: true, text: `honcho: reachable, key accepted (${where})` };
      } catch (err) {
        const why = err instanceof MemoryProviderError ? err.message : `honcho: ${describeError(err)}`;
        return { ok: false, text: `${why} (${where})` };
      }
    },
  };
}
