/**
 * External memory providers on the gateway: after each committed turn its exchange goes into each
 * provider's backlog (`backlog.ts`, off the reply's path); at a turn's start the worker asks, through
 * the `StateClient`, for what the providers know about the person talking (`insights`: each provider
 * asked in parallel, answers cached per user for `insights_ttl_s`, a provider slower than
 * `insights_timeout_ms` left out of this turn while its answer still fills the cache); and the
 * `memory_provider_query` tool asks them a question. Every call is about the caller's own user: the
 * provider's id comes from the caller's platform and user id, so one user's insights never reach
 * another's turn. In group chats the note is off unless `group_insights` (then the sender's own).
 * Each agent (`agents:`, read from the session key) uses the providers its `memory_providers` names,
 * and its records and reads there are its own: an exchange carries its agent into the backlog, and a
 * caller's agent picks where its note and answers come from.
 */
import { agentOfKey } from "../../../core/chat.js";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { GatewayEvents, TurnJob, TurnRecord, TurnResult } from "../../../core/turn.js";
import type { ChatType } from "../../../core/types.js";
import { type BacklogState, type BacklogTiming, OutageLog, ProviderBacklog } from "./backlog.js";
import { configuredProviders } from "./configured.js";
import type { MemoryConfig } from "./settings.js";
import type { MemoryProvidersStateApi, ProviderCaller } from "./state.js";
import type { Exchange, MemoryProvider, ProviderUser } from "./types.js";

/** What the providers need of the runner (`GatewayRunner` has this shape). */
export type MemoryProvidersGateway = GatewayEvents<{
  type: "turn-finished";
  turn: TurnRecord;
  result: TurnResult;
}>;

/** The gateway side of the providers. */
export interface MemoryProviders {
  /** The configured providers (empty: the feature is off and every member answers "none"). */
  readonly providers: readonly MemoryProvider[];
  /** The `memoryProviders` member of the StateClient. */
  readonly stateApi: MemoryProvidersStateApi;
  /** `TurnJob.insights` of a turn: set for a person's message when a provider is configured. */
  insightsFor(turn: TurnRecord, chatType: ChatType): TurnJob["insights"];
  /** Exchanges waiting for `provider`. */
  waiting(provider: string): number;
  stop(): Promise<void>;
}

/** A further agent's choice of providers (`agents[].memory_providers`; `HeraldConfig` has this shape). */
export interface AgentProvidersChoice {
  name: string;
  /** `false`: none; a list: those; undefined: every configured provider. */
  memoryProviders?: false | readonly string[] | undefined;
}

/** Cached insights kept at most (the oldest go first). */
const CACHE_ENTRIES = 2000;

/** Builds the providers of `config.memory.providers` and follows the runner's finished turns. */
export function createMemoryProviders(
  config: { memory: MemoryConfig; agents?: readonly AgentProvidersChoice[] | undefined },
  ports: { gateway: MemoryProvidersGateway; state: BacklogState; logger: Logger },
  options: { providers?: MemoryProvider[] | undefined; timing?: BacklogTiming | undefined } = {},
): MemoryProviders {
  const settings = config.memory.providers;
  const providers = options.providers ?? configuredProviders(settings);
  const logger = ports.logger.child({ component: "memory-providers" });
  const outages = new Map(providers.map((p) => [p.name, new OutageLog(p.name, logger)]));
  const backlogs = new Map(
    providers.map((p) => [
      p.name,
      new ProviderBacklog(ports.state, p, { outage: outages.get(p.name)!, logger, timing: options.timing }),
    ]),
  );
  const insights = new InsightsCache(outages, settings);
  const allowed = (chatType: ChatType) => chatType !== "group" || settings.groupInsights;
  const choices = new Map((config.agents ?? []).map((a) => [a.name, a.memoryProviders]));
  /** The providers `agent` uses (the default agent and an agent that names none: all). */
  const providersOf = (agent: string | undefined): readonly MemoryProvider[] => {
    const choice = agent === undefined ? undefined : choices.get(agent);
    if (choice === undefined) return providers;
    return choice === false ? [] : providers.filter((p) => choice.includes(p.name));
  };

  if (providers.length > 0) {
    ports.gateway.on("turn-finished", ({ turn, result }) => {
      const exchange = exchangeOf(turn, result);
      if (!exchange) return;
      for (const p of providersOf(exchange.agent)) backlogs.get(p.name)?.add(exchange);
    });
    // What waited from before the last stop.
    for (const backlog of backlogs.values()) backlog.wake();
  }

  const stateApi: MemoryProvidersStateApi = {
    async insights(caller) {
      const own = providersOf(caller.agent);
      if (own.length === 0 || !allowed(caller.chatType)) return undefined;
      return insights.note(own, userOf(caller), settings.insightsChars);
    },
    async query(caller, question) {
      if (providers.length === 0) return "No external memory provider is configured.";
      const own = providersOf(caller.agent);
      if (own.length === 0)
        return `External memory is off for agent ${caller.agent} (agents[].memory_providers).`;
      if (!allowed(caller.chatType))
        return "External memory is not consulted in group chats here (memory.providers.group_insights is off).";
      const user = userOf(caller);
      const signal = AbortSignal.timeout(settings.requestTimeoutMs);
      const answers = await Promise.all(
        own.map(async (p) => {
          try {
            const answer = await p.query(user, question, signal);
            outages.get(p.name)?.succeeded();
            return `${p.name}: ${answer || "(nothing known about this)"}`;
          } catch (err) {
            outages.get(p.name)?.failed(err);
            return `${p.name}: unavailable right now (${describeError(err)})`;
          }
        }),
      );
      return answers.join("\n\n");
    },
  };

  return {
    providers,
    stateApi,
    insightsFor(turn, chatType) {
      const own = providersOf(agentOfKey(turn.sessionKey));
      if (own.length === 0 || !personal(turn) || !allowed(chatType)) return undefined;
      return { maxChars: settings.insightsChars, timeoutMs: settings.insightsTimeoutMs };
    },
    waiting: (name) => backlogs.get(name)?.waiting() ?? 0,
    async stop() {
      await Promise.all([...backlogs.values()].map((b) => b.stop()));
    },
  };
}

/** A turn answering a person's message (not a cron run, a webhook, or an approval's answer). */
function personal(turn: TurnRecord): boolean {
  return !!turn.inbound && !turn.resume && (turn.source === "chat" || turn.source === "api");
}

function userOf(caller: ProviderCaller): ProviderUser {
  return {
    platform: caller.chat.platform,
    userId: caller.userId,
    userName: caller.userName,
    ...(caller.agent ? { agent: caller.agent } : {}),
  };
}

/** The exchange of a committed turn, or undefined when there is none to record. */
function exchangeOf(turn: TurnRecord, result: TurnResult): Exchange | undefined {
  if (result.kind !== "ok" || !personal(turn) || !turn.inbound) return undefined;
  const userText = turn.inbound.text.trim();
  const replyText = result.reply.text.trim();
  if (!userText || !replyText) return undefined;
  const agent = agentOfKey(turn.sessionKey);
  return {
    turnId: turn.id,
    sessionKey: turn.sessionKey,
    ...(agent ? { agent } : {}),
    platform: turn.chat.platform,
    userId: turn.userId,
    userName: turn.inbound.sender.name,
    chatType: turn.inbound.chatType,
    userText,
    replyText,
    at: turn.createdAt,
  };
}

/**
 * Insights per provider, agent and user: a fresh cached answer is used as it is; otherwise the provider is
 * asked (one request per user at a time) and waited for at most `insights_timeout_ms`. While a request
 * that outlived its turn is still out, later turns take the cached answer (or none) without waiting.
 */
class InsightsCache {
  readonly #entries = new Map<string, { text: string | undefined; at: number }>();
  readonly #pending = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly outages: ReadonlyMap<string, OutageLog>,
    private readonly settings: MemoryConfig["providers"],
  ) {}

  /** The note of `providers` about `user` (as `user.agent` knows them). */
  async note(
    providers: readonly MemoryProvider[],
    user: ProviderUser,
    maxChars: number,
  ): Promise<string | undefined> {
    const parts = await Promise.all(providers.map((p) => this.#of(p, user)));
    const header =
      "[What external memory knows about the person you are talking with (it may be incomplete or out of date; do not mention it unless it helps):]";
    let note = header;
    providers.forEach((p, i) => {
      const text = parts[i]?.trim();
      if (!text) return;
      const room = maxChars - note.length - p.name.length - 8;
      if (room < 40) return;
      note += `\nFrom ${p.name}:\n${text.slice(0, room)}`;
    });
    return note === header ? undefined : note;
  }

  async #of(provider: MemoryProvider, user: ProviderUser): Promise<string | undefined> {
    const key = `${provider.name}\u0000${user.agent ?? ""}\u0000${user.platform}\u0000${user.userId}`;
    const cached = this.#entries.get(key);
    if (cached && Date.now() - cached.at < this.settings.insightsTtlS * 1000) return cached.text;
    // An earlier turn's request is still out (the provider is slow): this turn does not wait again.
    if (this.#pending.has(key)) return cached?.text;
    const pending = this.#fetch(provider, user, key);
    this.#pending.set(key, pending);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, this.settings.insightsTimeoutMs, undefined);
    });
    // A stale answer is better than none while the provider is slow.
    const answer = await Promise.race([pending, late.then(() => cached?.text)]);
    clearTimeout(timer);
    return answer;
  }

  async #fetch(provider: MemoryProvider, user: ProviderUser, key: string): Promise<string | undefined> {
    const outage = this.outages.get(provider.name);
    try {
      const text = await provider.insights(user, AbortSignal.timeout(this.settings.requestTimeoutMs));
      outage?.succeeded();
      this.#entries.delete(key);
      this.#entries.set(key, { text, at: Date.now() });
      if (this.#entries.size > CACHE_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
      return text;
    } catch (err) {
      outage?.failed(err);
      return this.#entries.get(key)?.text;
    } finally {
      this.#pending.delete(key);
    }
  }
}
