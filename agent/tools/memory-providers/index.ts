/**
 * External memory providers: Honcho and Mem0 beside the built-in MEMORY.md and USER.md, which stay
 * on and unchanged. Each finished exchange of a person's message goes to every configured provider
 * after the turn committed (a backlog in `state.db` keeps it through an outage); at a turn's start
 * what they know about the person talking comes as a note before the message (never in the system
 * prompt, whose bytes stay the same for the session so prompt caches stay warm); the agent asks them
 * with `memory_provider_query` (toolset "memory", offered only when a provider is configured).
 *
 * Parts: `types.ts` the `MemoryProvider` contract; `honcho.ts`, `mem0.ts` the two providers (plain
 * `fetch` speaking the wire format of their SDKs); `settings.ts` the `memory:` section with
 * `providers`; `backlog.ts` the exchanges on their way and the outage log; `gateway.ts` the wiring on
 * the runner and the insights cache; `state.ts` the `StateClient` member.
 */
import { z } from "zod";
import { agentOfKey } from "../../../core/chat.js";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { TurnJob } from "../../../core/turn.js";
import { defineTool } from "../../tool-registry.js";
import type { StateClient, Tool } from "../../types.js";
import type { AgentProvidersChoice } from "./gateway.js";
import type { MemoryProvidersConfig } from "./settings.js";

export { MAX_WAITING, OutageLog, ProviderBacklog } from "./backlog.js";
export { checkMemoryProviders, configuredProviders } from "./configured.js";
export {
  type AgentProvidersChoice,
  createMemoryProviders,
  type MemoryProviders,
  type MemoryProvidersGateway,
} from "./gateway.js";
export { createHonchoProvider, type HonchoProviderConfig } from "./honcho.js";
export { agentScoped, sessionIdOf, userPeerId } from "./ids.js";
export { createMem0Provider, type Mem0ProviderConfig } from "./mem0.js";
export {
  type MemoryConfig,
  type MemoryProvidersConfig,
  memoryProvidersSettings,
} from "./settings.js";
export { type MemoryProvidersStateApi, memoryProvidersStateMethods, type ProviderCaller } from "./state.js";
export type * from "./types.js";

/** Time a worker gives the gateway beyond the note's own limit (the state API's round trip). */
const TRANSPORT_MARGIN_MS = 500;

/**
 * The note of a turn marked `insights`, or undefined (not marked, no provider, nothing known, too slow,
 * failed: the turn goes on without it). The loop's `turnNotes`.
 */
export async function providerInsightsNote(
  job: TurnJob,
  state: StateClient,
  log: Logger,
): Promise<string | undefined> {
  const api = state.memoryProviders;
  if (!job.insights || !api) return undefined;
  const { origin } = job;
  const agent = agentOfKey(origin.sessionKey);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, job.insights!.timeoutMs + TRANSPORT_MARGIN_MS, undefined);
  });
  try {
    const note = await Promise.race([
      api.insights({
        chat: origin.chat,
        chatType: origin.chatType,
        userId: origin.userId,
        ...(origin.userName ? { userName: origin.userName } : {}),
        ...(agent ? { agent } : {}),
      }),
      late,
    ]);
    return note?.slice(0, job.insights.maxChars + 200) || undefined;
  } catch (err) {
    log.debug({ err: describeError(err) }, "memory providers' note failed; the turn goes on without it");
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

const parameters = z.object({
  query: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .describe("What you want to know about the person you are talking with, as a question."),
});

/** `memory_provider_query` (toolset "memory"). */
export const memoryProviderQueryTool = defineTool({
  name: "memory_provider_query",
  description:
    "Ask the external memory service what it has learned about the person you are talking with across all their conversations (preferences, background, past requests). Use it when the user's saved notes do not answer something about them. It knows only this person.",
  parameters,
  toolset: "memory",
  async execute({ query }, ctx) {
    const api = ctx.state.memoryProviders;
    if (!api) return { content: "error: no external memory provider is available here.", isError: true };
    ctx.progress(`asking external memory: "${query.slice(0, 60)}"`);
    const { origin } = ctx;
    const agent = agentOfKey(origin.sessionKey);
    return api.query(
      {
        chat: origin.chat,
        chatType: origin.chatType,
        userId: origin.userId,
        userName: origin.userName,
        ...(agent ? { agent } : {}),
      },
      query,
    );
  },
});

/**
 * The provider tools `config` turns on: the query tool when any provider is configured, offered to the
 * turns of an agent only where it uses one of them (`agents[].memory_providers`).
 */
export function memoryProviderTools(
  config: MemoryProvidersConfig,
  agents: readonly AgentProvidersChoice[] = [],
): Tool[] {
  const configured = (["honcho", "mem0"] as const).filter((name) => config[name]);
  if (configured.length === 0) return [];
  const tool = memoryProviderQueryTool as Tool;
  const usesNone = ({ memoryProviders: own }: AgentProvidersChoice) =>
    own === false || (own !== undefined && !configured.some((p) => own.includes(p)));
  const none = new Set(agents.filter(usesNone).map((a) => a.name));
  if (none.size === 0) return [tool];
  const forSession = (sessionKey: string): Tool | undefined => {
    const agent = agentOfKey(sessionKey);
    return agent !== undefined && none.has(agent) ? undefined : tool;
  };
  return [Object.assign(Object.create(tool) as Tool, { forSession })];
}
