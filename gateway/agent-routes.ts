/**
 * Which agent answers a message. Herald runs the default agent (the top-level config) and any further
 * agents `agents:` names; `routes:` picks one by platform (or one bot account of it), chat or group,
 * chat type and sender, first match wins, the default agent where none matches. An owner may switch a
 * chat to another agent with `/agent <name>`: the choice is kept per chat (the `agent-choices`
 * key-value namespace) and wins over the routes. The agent's name is part of the session key
 * (core/chat.ts), so a switched chat continues in a fresh session of that agent.
 */

import { basePlatform, formatChat } from "../core/chat.js";
import type { CommandModule } from "../core/commands.js";
import type { ChatRef, InboundMessage, KeyValueStore } from "../core/types.js";

/** The default agent's name in routes, `/agent` and choices. */
export const DEFAULT_AGENT = "default";

/** One rule of `routes:`. Every field it has must match; a rule without one matches everything. */
export interface AgentRoute {
  agent: string;
  /** A platform (every account of it) or one account (`telegram@family`). */
  platform?: string | undefined;
  /** A chat string (`telegram:-100123`, its threads included) or a bare chat id. */
  chat?: string | undefined;
  chatType?: "dm" | "group" | undefined;
  /** `platform:id` or a bare id. */
  user?: string | undefined;
}

export interface AgentRouterOptions {
  /** The further agents' names (the default agent is always there). */
  agents: readonly string[];
  routes: readonly AgentRoute[];
  /** Each chat's `/agent` choice, by chat string. */
  choices: KeyValueStore;
  /** Parses a chat string with the platforms' chat-id rules. */
  parseChat: (value: string) => ChatRef | undefined;
}

/**
 * Why an agent answers a chat: a `/agent` choice, a route (its index), neither, or its platform: the API
 * server and the web chat find a chat's sessions and history by the default agent's keys, so they
 * always talk to the default agent.
 */
export type AgentReason =
  | { kind: "choice" }
  | { kind: "route"; index: number }
  | { kind: "default" }
  | { kind: "platform" };

/** The platforms whose chats always talk to the default agent (see {@link AgentReason}). */
export const DEFAULT_AGENT_PLATFORMS: ReadonlySet<string> = new Set(["api", "webchat"]);

/** Routes messages to agents. Every method is synchronous and never throws. */
export class AgentRouter {
  readonly #o: AgentRouterOptions;
  /** No further agent and no route to one: every message goes to the default agent, no choice read. */
  readonly #defaultOnly: boolean;

  constructor(options: AgentRouterOptions) {
    this.#o = options;
    this.#defaultOnly = options.agents.length === 0 && options.routes.every((r) => r.agent === DEFAULT_AGENT);
  }

  /** Every agent's name, the default first. */
  get names(): string[] {
    return [DEFAULT_AGENT, ...this.#o.agents];
  }

  /** The agent of `message`, undefined for the default agent (session keys carry no prefix then). */
  agentOf(message: InboundMessage): string | undefined {
    // Asked several times per message: with one agent, no key-value read each time.
    if (this.#defaultOnly) return undefined;
    const name = this.explain(message).agent;
    return name === DEFAULT_AGENT ? undefined : name;
  }

  /** The agent of `message` by name (`default` included) and why. */
  explain(message: InboundMessage): { agent: string; reason: AgentReason } {
    if (DEFAULT_AGENT_PLATFORMS.has(basePlatform(message.platform)))
      return { agent: DEFAULT_AGENT, reason: { kind: "platform" } };
    const chosen = this.#o.choices.get(formatChat(message.chat));
    if (chosen && this.names.includes(chosen)) return { agent: chosen, reason: { kind: "choice" } };
    const index = this.#o.routes.findIndex((r) => this.#matches(r, message));
    const route = this.#o.routes[index];
    return route
      ? { agent: route.agent, reason: { kind: "route", index } }
      : { agent: DEFAULT_AGENT, reason: { kind: "default" } };
  }

  /** Switches `chat` to `agent` (kept across restarts); `undefined` goes back to the routes. */
  choose(chat: ChatRef, agent: string | undefined): void {
    if (agent === undefined) this.#o.choices.delete(formatChat(chat));
    else this.#o.choices.set(formatChat(chat), agent);
  }

  #matches(route: AgentRoute, message: InboundMessage): boolean {
    const { platform, chat, sender, chatType } = message;
    if (route.platform && route.platform !== platform && route.platform !== basePlatform(platform)) {
      return false;
    }
    if (route.chatType && route.chatType !== chatType) return false;
    if (route.chat && !this.#sameChat(route.chat, chat)) return false;
    if (route.user) {
      const colon = route.user.indexOf(":");
      const on = colon > 0 ? route.user.slice(0, colon) : undefined;
      const id = colon > 0 ? route.user.slice(colon + 1) : route.user;
      if (on && on !== platform && on !== basePlatform(platform)) return false;
      if (id !== sender.id) return false;
    }
    return true;
  }

  #sameChat(wanted: string, chat: ChatRef): boolean {
    const ref = wanted.includes(":") ? this.#o.parseChat(wanted) : undefined;
    if (!ref) return wanted === chat.chatId;
    if (ref.platform !== chat.platform && ref.platform !== basePlatform(chat.platform)) return false;
    return ref.chatId === chat.chatId && (ref.threadId === undefined || ref.threadId === chat.threadId);
  }
}

/** What `/agent` needs besides the router. */
export interface AgentCommandsOptions {
  router: AgentRouter;
  /** The session key `message` would have with `agent` (undefined: the default agent). */
  keyOf(message: InboundMessage, agent: string | undefined): string;
  /** Ends the active session of a key (`TurnControl.reset`), so a switched chat starts afresh. */
  reset(sessionKey: string): unknown;
}

/**
 * `/agent`: which agent answers here and why, and the agents there are; `/agent <name>` (owners only)
 * switches this chat to another agent, in a fresh session of it.
 */
export function agentCommands(options: AgentCommandsOptions): CommandModule {
  const { router } = options;
  return {
    commands: {
      agent: {
        description: "show which agent answers here (owners: /agent <name> switches this chat)",
        run: ({ message, args, isOwner }) => {
          const { agent, reason } = router.explain(message);
          const wanted = args.trim().toLowerCase();
          if (!wanted) {
            const why =
              reason.kind === "choice"
                ? "chosen with /agent"
                : reason.kind === "route"
                  ? `routes[${reason.index}] of the configuration`
                  : reason.kind === "platform"
                    ? "the API server and the web chat always talk to the default agent"
                    : "no route matches this chat";
            const all = router.names.map((n) => (n === agent ? `**${n}**` : n)).join(", ");
            return [
              `Agent here: **${agent}** (${why}).`,
              `Agents: ${all}.${isOwner ? " Switch this chat with /agent <name>." : ""}`,
            ].join("\n");
          }
          if (!isOwner) return "Only an owner can switch the agent of this chat.";
          if (reason.kind === "platform")
            return "The API server and the web chat always talk to the default agent; switch a chat of another platform.";
          if (!router.names.includes(wanted)) {
            return `There is no agent “${wanted}”. Agents: ${router.names.join(", ")}.`;
          }
          if (wanted === agent) return `**${agent}** already answers here.`;
          router.choose(message.chat, wanted);
          const next = wanted === DEFAULT_AGENT ? undefined : wanted;
          options.reset(options.keyOf(message, next));
          return `🔀 This chat now talks to **${wanted}**, in a fresh session.`;
        },
      },
    },
  };
}
