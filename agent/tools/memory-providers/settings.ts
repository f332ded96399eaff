/**
 * The `memory:` section with its `providers`: the built-in files' budgets as skills/memory declares
 * them, and the external memory providers (Honcho, Mem0) with their env names, reference rows and
 * `herald doctor` lines. Each provider is on when its subsection is present (or its URL variable is
 * set); its API key is read from the variable `api_key_env` names.
 */
import { z } from "zod";
import { defineFeature } from "../../../core/settings.js";
import { memoryBudgetsShape, memorySettings } from "../../../skills/memory/settings.js";
import type { HonchoProviderConfig } from "./honcho.js";
import type { Mem0ProviderConfig } from "./mem0.js";

const HONCHO_URL = "https://api.honcho.dev";
const MEM0_URL = "https://api.mem0.ai";
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable's name");
/** Honcho's ids: letters, digits, `_` and `-`. */
const honchoId = z.string().regex(/^[A-Za-z0-9_-]{1,512}$/, "letters, digits, _ and - only");

const providersSchema = z
  .strictObject({
    honcho: z
      .strictObject({
        baseUrl: z.url({ protocol: /^https?$/ }).default(HONCHO_URL),
        apiKeyEnv: envName.default("HONCHO_API_KEY"),
        workspace: honchoId.default("herald"),
        assistantPeer: honchoId.default("herald"),
      })
      .optional(),
    mem0: z
      .strictObject({
        baseUrl: z.url({ protocol: /^https?$/ }).default(MEM0_URL),
        apiKeyEnv: envName.default("MEM0_API_KEY"),
        agentId: z.string().min(1).default("herald"),
        appId: z.string().min(1).optional(),
      })
      .optional(),
    /** The note's budget (all providers together), in characters. */
    insightsChars: z.number().int().min(100).max(8000).default(1000),
    /** A turn waits this long for insights, then goes on without them. */
    insightsTimeoutMs: z.number().int().min(50).max(30_000).default(1500),
    /** A user's insights are reused this long. */
    insightsTtlS: z.number().int().min(0).max(86_400).default(300),
    /** One request to a provider may take this long (writes, the tool, the doctor). */
    requestTimeoutMs: z.number().int().positive().default(15_000),
    /** Group chats get the sender's own insights too (off: insights in direct chats only). */
    groupInsights: z.boolean().default(false),
  })
  .prefault({});

/** The `memory` section as written. */
export const memorySectionSchema = z
  .strictObject({ ...memoryBudgetsShape, providers: providersSchema })
  .prefault({});

type MemorySection = z.output<typeof memorySectionSchema>;
type ProvidersSection = MemorySection["providers"];

/** `memory.providers` as the process uses it: each configured provider with its key. */
export interface MemoryProvidersConfig extends Omit<ProvidersSection, "honcho" | "mem0"> {
  honcho?: (HonchoProviderConfig & KeyRead) | undefined;
  mem0?: (Mem0ProviderConfig & KeyRead) | undefined;
}

/** The `memory` section as the process uses it. */
export type MemoryConfig = Omit<MemorySection, "providers"> & { providers: MemoryProvidersConfig };

/** A provider's key as the process read it, and the variable it comes from. */
export interface KeyRead {
  apiKey?: string | undefined;
  /** The variable `api_key_env` names. */
  apiKeyEnv: string;
  /** The key is needed (the gateway refuses to start without it; workers never use it). */
  keyRequired: boolean;
}

/** Reads each provider's key from the variable its `api_key_env` names (a missing one is told at use). */
function resolveMemory(
  section: MemorySection,
  env: Readonly<Record<string, string | undefined>>,
): MemoryConfig {
  const { honcho, mem0, ...rest } = section.providers;
  const timeoutMs = rest.requestTimeoutMs;
  const key = (name: string) => env[name]?.trim() || undefined;
  return {
    ...section,
    providers: {
      ...rest,
      ...(honcho
        ? {
            honcho: {
              baseUrl: honcho.baseUrl,
              apiKey: key(honcho.apiKeyEnv),
              apiKeyEnv: honcho.apiKeyEnv,
              // A self-hosted Honcho may run without authentication; the hosted one never does.
              keyRequired: honcho.baseUrl.startsWith(HONCHO_URL),
              workspace: honcho.workspace,
              assistantPeer: honcho.assistantPeer,
              timeoutMs,
            },
          }
        : {}),
      ...(mem0
        ? {
            mem0: {
              baseUrl: mem0.baseUrl,
              apiKey: key(mem0.apiKeyEnv),
              apiKeyEnv: mem0.apiKeyEnv,
              keyRequired: true,
              agentId: mem0.agentId,
              appId: mem0.appId,
              timeoutMs,
            },
          }
        : {}),
    },
  };
}

/** The `memory:` section: the built-in files' budgets and the external providers. */
export const memoryProvidersSettings = defineFeature({
  key: "memory",
  schema: memorySectionSchema,
  env: {
    ...memorySettings.env,
    HONCHO_URL: ["providers.honcho.base_url", "url"],
    HONCHO_WORKSPACE_ID: ["providers.honcho.workspace", "string"],
    MEM0_URL: ["providers.mem0.base_url", "url"],
    HERALD_MEMORY_GROUP_INSIGHTS: ["providers.group_insights", "bool"],
  },
  reference: {
    intro:
      "Built-in memory (`MEMORY.md`, `USER.md`) is always on. `providers` adds external memories: each finished exchange goes to them in the background (kept in a backlog while one is down), what they know about the person talking comes as a note before the message, and the agent can ask them (`memory_provider_query`). See [memory providers](memory-providers.md).",
    rows: [
      ...memorySettings.reference.rows,
      [
        "providers.honcho",
        "turns Honcho on (present, or `HONCHO_URL` set): each user becomes a peer, each session key a session",
        "none (off)",
      ],
      ["providers.honcho.base_url", "Honcho's API (a self-hosted server, or the hosted one)"],
      ["providers.honcho.api_key_env", "the variable holding the key (needed for the hosted API)"],
      ["providers.honcho.workspace", "the workspace Herald's peers and sessions live in"],
      ["providers.honcho.assistant_peer", "the assistant's peer id"],
      ["providers.mem0", "turns Mem0 on (present, or `MEM0_URL` set)", "none (off)"],
      ["providers.mem0.base_url", "Mem0's platform API (hosted, or a server that speaks it)"],
      ["providers.mem0.api_key_env", "the variable holding the key (required)"],
      ["providers.mem0.agent_id", "the `agent_id` of the assistant's memories"],
      ["providers.mem0.app_id", "an `app_id` sent with each exchange"],
      ["providers.insights_chars", "the note about the user (all providers together) in characters"],
      ["providers.insights_timeout_ms", "a turn waits this long for the note, then goes on without it"],
      ["providers.insights_ttl_s", "a user's note is reused this long (0: asked every turn)"],
      ["providers.request_timeout_ms", "one request to a provider may take this long"],
      [
        "providers.group_insights",
        "group chats get the sender's own note too (off: notes in direct chats only; exchanges are recorded either way)",
      ],
    ],
  },
  resolve: (section: MemorySection, { env }) => resolveMemory(section, env),
  // The providers' clients load for the check only: the config reads this file at every start.
  doctor: async (config: MemoryConfig) =>
    (await import("./configured.js")).checkMemoryProviders(config.providers),
});
