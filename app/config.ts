/**
 * The one reader of configuration: `HERALD_HOME/config.yaml`, then `HERALD_HOME/.env`, then the
 * environment (later wins), parsed with zod into one typed `HeraldConfig`. Every error names the key
 * (the env variable and the config.yaml path) and the fix.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { type ResolvedWebhook, resolveWebhooks, webhooksSchema } from "../adapters/webhooks/index.js";
import { execOptionsSchema } from "../agent/exec/index.js";
import { CAPABILITIES } from "../agent/plugins/sdk.js";
import { type McpServerConfig, mcpServersSchema, resolveMcpServers } from "../agent/tools/mcp/index.js";
import { isLoopbackHost } from "../agent/tools/web/address.js";
import { ConfigError } from "../core/errors.js";
import type { EnvKind, PlatformCommonConfig, PlatformModule } from "../core/platform.js";
import { parseTargets } from "../scheduler/targets.js";
import { chatParser, platformModules } from "./platforms.js";

const list = z.array(z.string()).default([]);
const optionalString = z.string().min(1).optional();

/** Why `text` is not a web origin as browsers send it in `Origin`, or undefined when it is one. */
function originProblem(text: string): string | undefined {
  const hint =
    "is not an origin: write scheme://host[:port] with no path or trailing slash, e.g. http://localhost:3000";
  if (text === "*" || text === "null") return `${hint} ('${text}' would admit any page)`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return hint;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return hint;
  return url.origin === text ? undefined : hint;
}

/** One entry of `providers:` (see agent/providers/types.ts). */
const providerSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, '.', '_' or '-' only"),
  baseUrl: z.url(),
  /** The environment variable (or HERALD_HOME/.env entry) holding the key; the key never goes in config.yaml. */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name such as OPENROUTER_API_KEY")
    .optional(),
  /** Extra request headers (OpenRouter's HTTP-Referer, X-Title). */
  headers: z.record(z.string(), z.string()).optional(),
  models: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        contextTokens: z.number().int().positive().optional(),
        /** US dollars per million tokens. */
        price: z
          .strictObject({
            input: z.number().min(0),
            output: z.number().min(0),
            cached: z.number().min(0).optional(),
          })
          .optional(),
        reasoning: z.boolean().optional(),
        vision: z.boolean().optional(),
        cacheControl: z.boolean().optional(),
      }),
    )
    .min(1, "list at least one model (name, and optionally context_tokens and price)"),
});

/** The sections that are not platforms; each platform module adds its own. */
const coreShape = {
  /** IANA zone for daily resets and cron. @defaultValue the process's zone */
  timezone: z.string().default(Intl.DateTimeFormat().resolvedOptions().timeZone),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** stdout's log lines: `auto` is pretty on a terminal and JSON otherwise. */
  logFormat: z.enum(["auto", "pretty", "json"]).default("auto"),
  /** `HERALD_HOME/logs/herald.log` is rotated past this size. */
  logMaxBytes: z
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Rotated log files kept (`herald.log.1` …); 0 writes no log file. */
  logFiles: z.number().int().min(0).default(5),
  model: z
    .strictObject({
      baseUrl: z.url().default("https://api.openai.com/v1"),
      apiKey: optionalString,
      name: z.string().min(1).default("gpt-4o-mini"),
      /**
       * The default model as `provider/model` (a provider of `providers`), or a bare name. @defaultValue
       * model.name, or the first provider's first model when only `providers` are configured
       */
      default: optionalString,
      /** Model references tried in order when the main one fails after its retries (any provider). */
      fallbacks: list,
      /** The model's context window in tokens; compression starts near it. */
      contextTokens: z.number().int().positive().default(128_000),
      maxIterations: z.number().int().positive().default(90),
      timeoutMs: z.number().int().positive().default(120_000),
      maxRetries: z.number().int().min(0).default(3),
      /** Whether the model accepts image input. */
      vision: z.boolean().default(false),
    })
    .prefault({}),
  /** Model providers (OpenAI-compatible endpoints), each with its key's env name and its models. */
  providers: z.array(providerSchema).default([]),
  /** Models by role, each `provider/model` (or a bare name). @defaultValue the session's model */
  auxiliary: z
    .strictObject({
      /** Writes the summary when a long conversation is compressed. */
      compression: optionalString,
      /** Runs the learning review (memory and skills). @defaultValue learning.model */
      review: optionalString,
    })
    .prefault({}),
  agent: z
    .strictObject({
      /** Extra system prompt text (persona). */
      persona: optionalString,
      toolsets: z
        .array(z.string())
        .default([
          "core",
          "cron",
          "memory",
          "skills",
          "terminal",
          "files",
          "web",
          "voice",
          "vision",
          "messaging",
          "delegate",
          "tasks",
        ]),
    })
    .prefault({}),
  /** How tools reach the model (agent/lazy-tools.ts): full schemas up front, or loaded on demand. */
  tools: z
    .strictObject({
      /** Send only the eager toolsets' schemas; list the rest in the prompt, loaded by `load_tools`. */
      lazy: z.boolean().default(true),
      /** The toolsets whose schemas every request carries (when enabled). */
      eager: z.array(z.string()).default(["core", "memory", "skills"]),
      /** `eager` per platform (`telegram`) or platform and chat type (`telegram:group`, more specific wins). */
      eagerFor: z
        .record(z.string(), z.array(z.string()))
        .superRefine((byKey, ctx) => {
          for (const key of Object.keys(byKey))
            if (!/^[a-z][a-z0-9]*(:(dm|group))?$/.test(key))
              ctx.addIssue({
                code: "custom",
                message: `'${key}' is neither a platform name nor <platform>:dm|group; write e.g. telegram or telegram:group`,
              });
        })
        .default({}),
    })
    .prefault({}),
  /** Where the agent's commands run (the terminal tools), and its workspaces. */
  exec: execOptionsSchema
    .extend({
      /** One workspace per session (default) or per user. */
      workspaceScope: z.enum(["session", "user"]).default("session"),
      /** The longest foreground timeout a terminal call may ask for, in seconds. */
      maxTimeoutS: z.number().int().positive().default(600),
      /** Give groups the terminal tools too (DMs of allowed users have them by default). */
      groups: z.boolean().default(false),
      /**
       * Dangerous commands: `manual` asks the user in the chat (/approve, /deny), `deny` refuses them,
       * `off` runs them (logged loudly at start).
       */
      dangerousCommands: z.enum(["manual", "deny", "off"]).default("manual"),
      /** How long an approval request waits for the user's answer, in seconds. */
      approvalTimeoutS: z.number().int().positive().default(300),
      /** Workspaces unused for this many days are deleted (never while a process runs there). */
      workspaceRetentionDays: z.number().int().positive().default(30),
    })
    .prefault({}),
  /** The web tools: a search provider, and whether fetches may reach private addresses. */
  web: z
    .strictObject({
      /** `{ provider: searxng | brave | tavily, base_url, api_key }`; checked when the tools are built. */
      search: z.record(z.string(), z.unknown()).optional(),
      /**
       * Let web_extract, vision_analyze and every plugin's `ctx.fetch` reach private, loopback and
       * link-local addresses (SSRF guard off).
       */
      allowPrivate: z.boolean().default(false),
    })
    .prefault({}),
  /** Speech: `stt` (voice notes in) and `tts` (replies out), OpenAI-compatible endpoints; checked when built. */
  voice: z
    .strictObject({
      stt: z.record(z.string(), z.unknown()).optional(),
      tts: z.record(z.string(), z.unknown()).optional(),
    })
    .prefault({}),
  /**
   * The auxiliary vision model of `vision_analyze` (OpenAI-compatible chat completions with images).
   * Unset: the tool says how to configure it.
   */
  vision: z
    .strictObject({
      baseUrl: z.url({ protocol: /^https?$/ }),
      apiKey: optionalString,
      model: z.string().min(1),
      timeoutMs: z.number().int().positive().optional(),
    })
    .optional(),
  /** MEMORY.md and USER.md budgets in characters. */
  memory: z
    .strictObject({
      memoryChars: z.number().int().positive().default(2200),
      userChars: z.number().int().positive().default(1375),
    })
    .prefault({}),
  /** The learning loop: a background review after busy turns and at session reset; the skills curator. */
  learning: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** A turn with at least this many tool calls is reviewed. */
      toolCallThreshold: z.number().int().positive().default(5),
      /** An ended session is reviewed when it has at least this many unreviewed user messages. */
      resetMinTurns: z.number().int().positive().default(4),
      /** The review's model. @defaultValue model.name */
      model: optionalString,
      maxIterations: z.number().int().positive().default(8),
      /** Run the skills curator once a week in the gateway. */
      curateWeekly: z.boolean().default(false),
      /** The curator archives user skills unused for this long. */
      archiveAfterDays: z.number().int().positive().default(90),
    })
    .prefault({}),
  queue: z
    .strictObject({
      redisUrl: optionalString,
      concurrency: z.number().int().positive().default(4),
      prefix: z
        .string()
        .regex(/^[a-zA-Z0-9_-]+$/)
        .default("herald"),
      /**
       * Redis queue: how long a running turn's locks last without renewal, so a turn of a killed worker
       * runs again on another after about this long (plus the stalled check, at most as long again).
       */
      lockDurationMs: z.number().int().min(1_000).default(20_000),
    })
    .prefault({}),
  /** `delegate_task`: children on the job queue (issue 23). */
  delegation: z
    .strictObject({
      /** Depth past which children get no `delegate_task` (the chat's turn is depth 0). */
      maxDepth: z.number().int().min(1).max(5).default(2),
      /** Children of one call running at once (a call may ask for fewer). */
      maxParallel: z.number().int().min(1).max(20).default(3),
      /** Step cap of a child turn. */
      maxIterations: z.number().int().positive().default(20),
      /** Time budget of a child from its start, in seconds. */
      timeoutS: z.number().int().positive().default(600),
    })
    .prefault({}),
  /** The shared task board (`task_board`, `herald tasks`). */
  taskBoard: z
    .strictObject({
      /** How long a claim holds without its turn calling the board again, in seconds. */
      claimTtlS: z.number().int().positive().default(900),
    })
    .prefault({}),
  gatewayClient: z
    .strictObject({
      url: optionalString,
      key: optionalString,
    })
    .prefault({}),
  apiServer: z
    .strictObject({
      enabled: z.boolean().default(true),
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(0).max(65_535).default(8642),
      key: optionalString,
      /**
       * Origins (`scheme://host[:port]`) whose web pages may call the API and `/mcp` cross-origin: their
       * CORS preflight is answered and the responses name them. Others get no CORS at all.
       */
      corsOrigins: z
        .array(z.string())
        .default([])
        .superRefine((origins, ctx) => {
          for (const origin of origins) {
            const problem = originProblem(origin);
            if (problem) ctx.addIssue({ code: "custom", message: `'${origin}' ${problem}` });
          }
        }),
    })
    .prefault({}),
  /** The web dashboard at /dashboard on the API server's host and port. */
  dashboard: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** The login password (API_SERVER_KEY logs in too); without either, only loopback is served. */
      password: z.string().min(12, "must be at least 12 characters").optional(),
      /** How long a login lasts, in hours. */
      sessionHours: z.number().positive().max(720).default(12),
    })
    .prefault({}),
  access: z
    .strictObject({
      allowedUsers: list,
      allowAllUsers: z.boolean().default(false),
      /**
       * The chat users who are owners (`platform:userId` entries; they are admitted too). Unset: everyone
       * on an allowlist is an owner. The API server's key holder, the terminal and MCP callers always
       * are. See the owner policy in gateway/access.ts.
       */
      owners: list,
    })
    .prefault({}),
  sessions: z
    .strictObject({
      reset: z
        .strictObject({
          mode: z.enum(["idle", "daily", "both", "none"]).default("idle"),
          idleMinutes: z.number().int().positive().default(1440),
          atHour: z.number().int().min(0).max(23).default(4),
        })
        .prefault({}),
      groupSessions: z.enum(["per_user", "shared"]).default("per_user"),
      busyPolicy: z.enum(["interrupt", "queue"]).default("interrupt"),
    })
    .prefault({}),
  /** Plugins in `HERALD_HOME/plugins/<name>/` (see README, "Writing a plugin"). */
  plugins: z
    .strictObject({
      /** Load plugins at all. */
      enabled: z.boolean().default(true),
      /** The plugins folder. @defaultValue HERALD_HOME/plugins */
      dir: optionalString,
      /** How long one hook may take before it counts as no change. */
      hookTimeoutMs: z.number().int().positive().default(2000),
      /**
       * Plugins whose `ctx.fetch` may reach private, loopback and link-local addresses (`web.allowPrivate`
       * opens every plugin's). Others reach only public addresses.
       */
      allowPrivate: z.array(z.string()).default([]),
      /**
       * Plugins whose tools and commands only owners' turns get (a plugin that acts elsewhere with the
       * operator's credentials). Others' tools reach every admitted user.
       */
      ownersOnly: z.array(z.string()).default([]),
      /** What plugins may do by chat type (granted only when the plugin also declares it). */
      capabilities: z
        .strictObject({
          dm: z.array(z.enum(CAPABILITIES)).default([...CAPABILITIES]),
          group: z.array(z.enum(CAPABILITIES)).default(["network", "state"]),
          /** Per platform overrides: `{ telegram: { group: [...] } }`. */
          platforms: z
            .record(
              z.string(),
              z.strictObject({
                dm: z.array(z.enum(CAPABILITIES)).optional(),
                group: z.array(z.enum(CAPABILITIES)).optional(),
              }),
            )
            .default({}),
        })
        .prefault({}),
    })
    .prefault({}),
  media: z
    .strictObject({
      maxBytes: z
        .number()
        .int()
        .positive()
        .default(20 * 1024 * 1024),
      /**
       * Files under `HERALD_HOME/cache` (what users sent, files of MCP tools, spoken replies) older than
       * this many days are deleted by the housekeeping pass (app/housekeeping.ts). A turn copies its
       * attachments into the session's workspace, so the cached copy is only a hand-off.
       */
      retentionDays: z.number().int().min(1, "a whole number of days, at least 1").default(7),
    })
    .prefault({}),
};

const schema = z.strictObject({
  ...coreShape,
  /** MCP servers by name (agent/tools/mcp/config.ts); resolved into `HeraldConfig.mcpServers`. */
  mcpServers: mcpServersSchema,
  /** Inbound webhook routes (adapters/webhooks/types.ts); their secrets resolved into `HeraldConfig.webhooks`. */
  webhooks: webhooksSchema,
  ...Object.fromEntries(platformModules.map((m) => [m.name, m.schema])),
});

/** The whole typed configuration plus where it came from. */
export type HeraldConfig = z.infer<z.ZodObject<typeof coreShape>> & {
  homeDir: string;
  /** Each platform module's section, by platform name, parsed by the module's schema. */
  platforms: Record<string, PlatformCommonConfig>;
  /** The `mcp_servers:` entries, resolved (a stdio server's whole environment, bearer headers). */
  mcpServers: McpServerConfig[];
  /** The `webhooks:` routes, each with its secret read from its env variable. */
  webhooks: ResolvedWebhook[];
};

type Kind = EnvKind;

/** Environment variables and the config path each sets. Every env name has a config.yaml equivalent. */
const ENV: Record<string, [path: string, kind: Kind]> = {
  HERALD_TIMEZONE: ["timezone", "string"],
  HERALD_LOG_LEVEL: ["log_level", "string"],
  HERALD_LOG_FORMAT: ["log_format", "string"],
  HERALD_LOG_MAX_BYTES: ["log_max_bytes", "int"],
  HERALD_LOG_FILES: ["log_files", "int"],
  OPENAI_BASE_URL: ["model.base_url", "url"],
  OPENAI_API_KEY: ["model.api_key", "string"],
  HERALD_MODEL: ["model.name", "string"],
  HERALD_FALLBACK_MODELS: ["model.fallbacks", "list"],
  HERALD_DEFAULT_MODEL: ["model.default", "string"],
  HERALD_COMPRESSION_MODEL: ["auxiliary.compression", "string"],
  HERALD_REVIEW_MODEL: ["auxiliary.review", "string"],
  HERALD_CONTEXT_TOKENS: ["model.context_tokens", "int"],
  HERALD_MAX_ITERATIONS: ["model.max_iterations", "int"],
  HERALD_MODEL_VISION: ["model.vision", "bool"],
  HERALD_TOOLSETS: ["agent.toolsets", "list"],
  HERALD_TOOLS_LAZY: ["tools.lazy", "bool"],
  HERALD_TOOLS_EAGER: ["tools.eager", "list"],
  HERALD_EXEC_BACKEND: ["exec.backend", "string"],
  HERALD_EXEC_NETWORK: ["exec.network_allowed", "bool"],
  HERALD_EXEC_GROUPS: ["exec.groups", "bool"],
  HERALD_EXEC_WORKSPACE_SCOPE: ["exec.workspace_scope", "string"],
  HERALD_EXEC_MAX_TIMEOUT_S: ["exec.max_timeout_s", "int"],
  HERALD_EXEC_DANGEROUS_COMMANDS: ["exec.dangerous_commands", "string"],
  HERALD_EXEC_APPROVAL_TIMEOUT_S: ["exec.approval_timeout_s", "int"],
  HERALD_EXEC_WORKSPACE_RETENTION_DAYS: ["exec.workspace_retention_days", "int"],
  HERALD_EXEC_TMP_SIZE_BYTES: ["exec.limits.tmp_size_bytes", "int"],
  HERALD_EXEC_WORKSPACE_QUOTA_BYTES: ["exec.limits.workspace_quota_bytes", "int"],
  HERALD_EXEC_SANDBOX_UID: ["exec.sandbox.uid", "int"],
  HERALD_EXEC_SANDBOX_GID: ["exec.sandbox.gid", "int"],
  HERALD_WEB_SEARCH_PROVIDER: ["web.search.provider", "string"],
  HERALD_WEB_SEARCH_URL: ["web.search.base_url", "url"],
  HERALD_WEB_SEARCH_KEY: ["web.search.api_key", "string"],
  HERALD_WEB_ALLOW_PRIVATE: ["web.allow_private", "bool"],
  HERALD_STT_URL: ["voice.stt.base_url", "url"],
  HERALD_STT_KEY: ["voice.stt.api_key", "string"],
  HERALD_STT_MODEL: ["voice.stt.model", "string"],
  HERALD_TTS_URL: ["voice.tts.base_url", "url"],
  HERALD_TTS_KEY: ["voice.tts.api_key", "string"],
  HERALD_TTS_MODEL: ["voice.tts.model", "string"],
  HERALD_TTS_VOICE: ["voice.tts.voice", "string"],
  HERALD_VISION_URL: ["vision.base_url", "url"],
  HERALD_VISION_KEY: ["vision.api_key", "string"],
  HERALD_VISION_MODEL: ["vision.model", "string"],
  HERALD_MEMORY_CHARS: ["memory.memory_chars", "int"],
  HERALD_USER_CHARS: ["memory.user_chars", "int"],
  HERALD_LEARNING_ENABLED: ["learning.enabled", "bool"],
  HERALD_LEARNING_TOOL_CALL_THRESHOLD: ["learning.tool_call_threshold", "int"],
  HERALD_LEARNING_RESET_MIN_TURNS: ["learning.reset_min_turns", "int"],
  HERALD_LEARNING_MODEL: ["learning.model", "string"],
  HERALD_LEARNING_MAX_ITERATIONS: ["learning.max_iterations", "int"],
  HERALD_SKILLS_CURATE_WEEKLY: ["learning.curate_weekly", "bool"],
  HERALD_SKILLS_ARCHIVE_AFTER_DAYS: ["learning.archive_after_days", "int"],
  REDIS_URL: ["queue.redis_url", "string"],
  HERALD_CONCURRENCY: ["queue.concurrency", "int"],
  HERALD_QUEUE_PREFIX: ["queue.prefix", "string"],
  HERALD_QUEUE_LOCK_DURATION_MS: ["queue.lock_duration_ms", "int"],
  HERALD_DELEGATE_MAX_DEPTH: ["delegation.max_depth", "int"],
  HERALD_DELEGATE_MAX_PARALLEL: ["delegation.max_parallel", "int"],
  HERALD_DELEGATE_MAX_ITERATIONS: ["delegation.max_iterations", "int"],
  HERALD_DELEGATE_TIMEOUT_S: ["delegation.timeout_s", "int"],
  HERALD_TASK_CLAIM_TTL_S: ["task_board.claim_ttl_s", "int"],
  HERALD_GATEWAY_URL: ["gateway_client.url", "url"],
  HERALD_GATEWAY_KEY: ["gateway_client.key", "string"],
  API_SERVER_ENABLED: ["api_server.enabled", "bool"],
  API_SERVER_HOST: ["api_server.host", "string"],
  API_SERVER_PORT: ["api_server.port", "int"],
  API_SERVER_KEY: ["api_server.key", "string"],
  API_SERVER_CORS_ORIGINS: ["api_server.cors_origins", "list"],
  DASHBOARD_ENABLED: ["dashboard.enabled", "bool"],
  DASHBOARD_PASSWORD: ["dashboard.password", "string"],
  DASHBOARD_SESSION_HOURS: ["dashboard.session_hours", "int"],
  GATEWAY_ALLOWED_USERS: ["access.allowed_users", "list"],
  GATEWAY_ALLOW_ALL_USERS: ["access.allow_all_users", "bool"],
  GATEWAY_OWNERS: ["access.owners", "list"],
  HERALD_RESET_MODE: ["sessions.reset.mode", "string"],
  HERALD_RESET_IDLE_MINUTES: ["sessions.reset.idle_minutes", "int"],
  HERALD_RESET_AT_HOUR: ["sessions.reset.at_hour", "int"],
  HERALD_GROUP_SESSIONS: ["sessions.group_sessions", "string"],
  HERALD_BUSY_POLICY: ["sessions.busy_policy", "string"],
  HERALD_MEDIA_MAX_BYTES: ["media.max_bytes", "int"],
  HERALD_MEDIA_RETENTION_DAYS: ["media.retention_days", "int"],
  HERALD_PLUGINS_ENABLED: ["plugins.enabled", "bool"],
  HERALD_PLUGINS_DIR: ["plugins.dir", "string"],
  HERALD_PLUGINS_HOOK_TIMEOUT_MS: ["plugins.hook_timeout_ms", "int"],
  HERALD_PLUGINS_ALLOW_PRIVATE: ["plugins.allow_private", "list"],
  HERALD_PLUGINS_OWNERS_ONLY: ["plugins.owners_only", "list"],
  HERALD_PLUGINS_DM_CAPABILITIES: ["plugins.capabilities.dm", "list"],
  HERALD_PLUGINS_GROUP_CAPABILITIES: ["plugins.capabilities.group", "list"],
};

// Each platform's own variables, and the ones every platform has: `<P>_ALLOWED_USERS`, `<P>_HOME_CHANNEL`,
// `<P>_REQUIRE_MENTION`, `<P>_TOOLSETS`.
for (const module of platformModules) {
  const p = module.name;
  for (const [name, [key, kind]] of Object.entries(module.env)) ENV[name] = [`${p}.${key}`, kind];
  const P = p.toUpperCase();
  ENV[`${P}_ALLOWED_USERS`] = [`${p}.allowed_users`, "list"];
  ENV[`${P}_HOME_CHANNEL`] = [`${p}.home_channel`, "string"];
  ENV[`${P}_REQUIRE_MENTION`] = [`${p}.require_mention`, "bool"];
  ENV[`${P}_TOOLSETS`] = [`${p}.toolsets`, "list"];
}

/** Env names that hold secrets (never printed by `doctor`, never logged). */
export const SECRET_ENV = new Set(Object.keys(ENV).filter((k) => /TOKEN|KEY|PASSWORD|SECRET/.test(k)));

const snakeToCamel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const camelToSnake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeToCamel(k), camelKeys(v)]));
  }
  return value;
}

/** `mcp_servers:` with each server's own keys camelised, but not server names, env or header names. */
function camelMcpServers(section: unknown): unknown {
  if (!section || typeof section !== "object" || Array.isArray(section)) return section;
  return Object.fromEntries(
    Object.entries(section).map(([name, server]) => {
      if (!server || typeof server !== "object" || Array.isArray(server)) return [name, server];
      return [
        name,
        Object.fromEntries(
          Object.entries(server).map(([k, v]) => [
            snakeToCamel(k),
            k === "env" || k === "headers" ? v : camelKeys(v),
          ]),
        ),
      ];
    }),
  );
}

function coerce(envName: string, raw: string, kind: Kind): unknown {
  const value = raw.trim();
  switch (kind) {
    case "string":
    case "url":
      return value;
    case "list":
      return value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    case "int": {
      if (!/^-?\d+$/.test(value)) {
        throw new ConfigError(
          envName,
          `${envName} must be a whole number, got '${value}'. Fix: set ${envName}=<number>.`,
        );
      }
      return Number(value);
    }
    case "bool": {
      const v = value.toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off"].includes(v)) return false;
      throw new ConfigError(
        envName,
        `${envName} must be true or false, got '${value}'. Fix: set ${envName}=true or false.`,
      );
    }
  }
}

function setPath(target: Record<string, unknown>, snakePath: string, value: unknown): void {
  const parts = snakePath.split(".").map(snakeToCamel);
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!next || typeof next !== "object" || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

/** The env name that sets a config path, for error messages. */
function envNameFor(snakePath: string): string | undefined {
  return Object.entries(ENV).find(([, [p]]) => p === snakePath)?.[0];
}

export interface LoadConfigOptions {
  /** The environment to read. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
}

/** Resolves `HERALD_HOME` (default `~/.herald`). */
export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env["HERALD_HOME"];
  if (raw) return resolve(raw.replace(/^~(?=$|\/)/, homedir()));
  return join(homedir(), ".herald");
}

/**
 * Loads and validates the configuration.
 * @throws ConfigError naming the key and the fix.
 */
export function loadConfig(options: LoadConfigOptions = {}): HeraldConfig {
  const processEnv = options.env ?? process.env;
  const homeDir = resolveHome(processEnv);

  let fileValues: Record<string, unknown> = {};
  const yamlPath = join(homeDir, "config.yaml");
  if (existsSync(yamlPath)) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(yamlPath, "utf8"));
    } catch (err) {
      throw new ConfigError(
        "config.yaml",
        `${yamlPath} is not valid YAML: ${(err as Error).message}. Fix the file.`,
        {
          cause: err,
        },
      );
    }
    if (parsed != null && (typeof parsed !== "object" || Array.isArray(parsed))) {
      throw new ConfigError("config.yaml", `${yamlPath} must be a mapping of keys (model:, telegram:, ...).`);
    }
    // Server names and the names in a server's env and headers are kept as written.
    const { mcp_servers: mcpSection, ...rest } = (parsed ?? {}) as Record<string, unknown>;
    fileValues = (camelKeys(rest) as Record<string, unknown>) ?? {};
    if (mcpSection !== undefined) fileValues["mcpServers"] = camelMcpServers(mcpSection);
  }

  const dotenvPath = join(homeDir, ".env");
  const dotenv = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath)) : {};
  // The real environment wins over HERALD_HOME/.env.
  const env: Record<string, string | undefined> = { ...dotenv, ...processEnv };

  for (const [name, [path, kind]] of Object.entries(ENV)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    setPath(fileValues, path, coerce(name, raw, kind));
  }

  const result = schema.safeParse(fileValues);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const snakePath = issue.path.map((p) => camelToSnake(String(p))).join(".");
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map(camelToSnake);
      const where = snakePath ? `${snakePath}.` : "";
      throw new ConfigError(
        `${where}${keys[0]}`,
        `config.yaml has an unknown key '${where}${keys.join(`', '${where}`)}'. Fix: remove it or check its spelling against the README's configuration table.`,
      );
    }
    const envName = envNameFor(snakePath);
    const keyName = envName ? `${envName} (config.yaml: ${snakePath})` : `config.yaml: ${snakePath}`;
    throw new ConfigError(
      envName ?? snakePath,
      `${keyName} is invalid: ${issue.message}. Fix: correct the value.`,
    );
  }
  const { mcpServers: mcpSection, webhooks: webhookSection, ...parsedData } = result.data;
  const data: Record<string, unknown> = parsedData;
  const platforms: Record<string, PlatformCommonConfig> = {};
  for (const module of platformModules) {
    const section = data[module.name] as PlatformCommonConfig;
    delete data[module.name];
    module.validate?.(section);
    platforms[module.name] = section;
  }
  const mcpServers = resolveMcpServers(mcpSection, env, homeDir);
  const webhooks = resolveWebhooks(webhookSection, env);
  webhooks.forEach(checkWebhookTargets);
  const config = {
    ...(data as z.infer<z.ZodObject<typeof coreShape>>),
    homeDir,
    platforms,
    mcpServers,
    webhooks,
  };
  resolveProviders(config, env, fileValues);
  validateCrossFields(config);
  return config;
}

/**
 * Reads each provider's key from its env variable (the environment, then HERALD_HOME/.env) and settles
 * `model.default`. Provider names must be unique.
 */
function resolveProviders(
  config: HeraldConfig,
  env: Record<string, string | undefined>,
  given: Record<string, unknown>,
): void {
  const seen = new Set<string>();
  for (const [i, provider] of config.providers.entries()) {
    if (seen.has(provider.name)) {
      throw new ConfigError(
        `providers.${i}.name`,
        `config.yaml: providers has two entries named '${provider.name}'. Fix: give each provider its own name.`,
      );
    }
    seen.add(provider.name);
    const keyEnv = provider.apiKeyEnv;
    const key = keyEnv ? env[keyEnv]?.trim() : undefined;
    if (keyEnv && !key) {
      throw new ConfigError(
        keyEnv,
        `Provider '${provider.name}' reads its key from ${keyEnv} (config.yaml: providers.${i}.api_key_env), which is not set. Fix: add ${keyEnv}=<key> to HERALD_HOME/.env or the environment, or remove api_key_env for a server that needs no key.`,
      );
    }
    (provider as { apiKey?: string }).apiKey = key;
  }
  const model = given["model"] as Record<string, unknown> | undefined;
  const first = config.providers[0];
  if (!config.model.default) {
    config.model.default =
      first && model?.["name"] === undefined ? `${first.name}/${first.models[0]!.name}` : config.model.name;
  }
}

/** The providers with the key each read from its env variable (set by the loader; never logged). */
export type ProviderConfig = HeraldConfig["providers"][number] & { apiKey?: string | undefined };

/** True when `host` accepts connections only from this machine (exact; see agent/tools/web/address.ts). */
export { isLoopbackHost };

function validateCrossFields(config: HeraldConfig): void {
  const api = config.apiServer;
  if (api.enabled && !isLoopbackHost(api.host) && !api.key) {
    throw new ConfigError(
      "API_SERVER_KEY",
      `API_SERVER_HOST is ${api.host} (reachable from other machines) but API_SERVER_KEY is not set. Fix: set API_SERVER_KEY to a long random string, or set API_SERVER_HOST=127.0.0.1.`,
    );
  }
  // Sandboxed commands with the network share the host's loopback, where a key-less API server answers
  // as the owner (send anywhere, run turns) and a login-less dashboard shows every transcript.
  if (api.enabled && !api.key && config.exec.backend === "sandbox" && config.exec.networkAllowed) {
    throw new ConfigError(
      "API_SERVER_KEY",
      `HERALD_EXEC_NETWORK is on, so commands in the sandbox share this machine's network and can reach the API server on ${api.host}:${api.port}, which without API_SERVER_KEY answers them as the owner. Fix: set API_SERVER_KEY to a long random string (the dashboard then asks for it too), or set API_SERVER_ENABLED=false, or turn HERALD_EXEC_NETWORK off.`,
    );
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: config.timezone });
  } catch {
    throw new ConfigError(
      "HERALD_TIMEZONE",
      `HERALD_TIMEZONE (config.yaml: timezone) '${config.timezone}' is not a known time zone. Fix: use an IANA name such as Europe/Berlin.`,
    );
  }
  if (config.queue.redisUrl && !/^rediss?:\/\//.test(config.queue.redisUrl)) {
    throw new ConfigError(
      "REDIS_URL",
      `REDIS_URL must start with redis:// or rediss://, got '${config.queue.redisUrl}'. Fix: e.g. REDIS_URL=redis://127.0.0.1:6379.`,
    );
  }
}

/** A webhook's `deliver` must be a target list (as cron's). @throws ConfigError naming the key */
function checkWebhookTargets(route: ResolvedWebhook, i: number): void {
  try {
    parseTargets(route.deliver, {
      hasOrigin: false,
      knownPlatforms: new Set([...platformModules.map((m) => m.name), "api"]),
      parseChat: chatParser,
    });
  } catch (err) {
    throw new ConfigError(
      `webhooks.${i}.deliver`,
      `config.yaml: webhooks.${i}.deliver ('${route.deliver}') is not a delivery target: ${(err as Error).message}`,
    );
  }
}

/** The modules of the platforms whose credentials are configured (the adapters the gateway starts). */
export function configuredPlatforms(config: HeraldConfig): PlatformModule[] {
  return platformModules.filter((m) => {
    const section = config.platforms[m.name];
    return section !== undefined && m.isConfigured(section);
  });
}

/** A platform's section, typed by its module (the loader parsed it with that module's schema). */
export function sectionOf<C extends PlatformCommonConfig>(
  config: HeraldConfig,
  module: PlatformModule<C>,
): C {
  return config.platforms[module.name] as C;
}

/** Every env variable Herald reads, with its config.yaml path (README table, `doctor`). */
export function envTable(): { env: string; path: string; secret: boolean }[] {
  return Object.entries(ENV).map(([env, [path]]) => ({ env, path, secret: SECRET_ENV.has(env) }));
}

/** The execution backend's own options out of the `exec` section (the rest is the tools' settings). */
export function execBackendOptions(config: HeraldConfig) {
  const { backend, limits, networkAllowed, sandbox, ssh, docker } = config.exec;
  return { backend, limits, networkAllowed, sandbox, ssh, docker };
}
