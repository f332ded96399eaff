/**
 * The `memoryProviders` member of the `StateClient`: what the external memory providers know about the
 * caller (the turn's note, the `memory_provider_query` tool), served by the gateway, with the argument
 * schemas of its methods for the state API.
 */
import { z } from "zod";
import type { ChatRef, ChatType } from "../../../core/types.js";
import { chatRefSchema, type MethodsOf, type StateMethodSchemas } from "../../state-methods.js";

/** Who asks: the turn's chat, its type, the person talking, and the agent they talk to. */
export interface ProviderCaller {
  chat: ChatRef;
  chatType: ChatType;
  userId: string;
  userName?: string | undefined;
  /** The turn's agent (`agentOfKey` of its session key); undefined: the default agent. */
  agent?: string | undefined;
}

/** What the providers answer a turn. Neither method rejects on a provider's failure. */
export interface MemoryProvidersStateApi {
  /**
   * The note about the caller's user for the prompt (bounded, the slow providers left out), or
   * undefined when none is configured, none knows anything, or the chat gets no note.
   */
  insights(caller: ProviderCaller): Promise<string | undefined>;
  /** Each provider's answer to `question` about the caller's user, one paragraph each. */
  query(caller: ProviderCaller, question: string): Promise<string>;
}

declare module "../../types.js" {
  interface StateClient {
    /** External memory providers (Honcho, Mem0); absent where the gateway offers none. */
    memoryProviders?: MemoryProvidersStateApi | undefined;
  }
}

const providerCallerSchema = z.strictObject({
  chat: chatRefSchema,
  chatType: z.enum(["dm", "group"]),
  userId: z.string(),
  userName: z.string().optional(),
  agent: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/)
    .optional(),
});

/** The argument schemas of the `memoryProviders` member. */
export const memoryProvidersStateMethods = {
  "memoryProviders.insights": z.tuple([providerCallerSchema]),
  "memoryProviders.query": z.tuple([providerCallerSchema, z.string().min(1).max(2000)]),
} satisfies StateMethodSchemas<MethodsOf<"memoryProviders">>;
