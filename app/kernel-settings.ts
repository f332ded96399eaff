/**
 * The kernel's settings: what is neither a platform's nor a feature's (time zone and logs, the model and
 * its providers, the agent's toolsets, the queue, the API server, access, sessions, media). Their zod
 * shape, the environment variables that set them, and their sections of docs/configuration.md. Features
 * declare their own sections in their folders (app/features.ts lists them), platforms in their modules;
 * the kernel's rows of the reference are in app/kernel-reference.ts.
 */
import { z } from "zod";
import { BACKEND_NAMES } from "../agent/exec/types.js";
import { MODEL_APIS } from "../agent/providers/types.js";
import type { EnvKind } from "../core/settings.js";
import { systemTimeZone } from "../core/time-zone.js";

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
  /** The wire protocol; read from base_url when absent (Anthropic's host, else OpenAI chat). */
  api: z.enum(MODEL_APIS).optional(),
  /** Required but for `api: anthropic` (https://api.anthropic.com by default). */
  baseUrl: z.url().optional(),
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
            cacheWrite: z.number().min(0).optional(),
          })
          .optional(),
        reasoning: z.boolean().optional(),
        vision: z.boolean().optional(),
        cacheControl: z.boolean().optional(),
        thinkingBudget: z.number().int().min(1024).optional(),
        maxOutputTokens: z.number().int().positive().optional(),
      }),
    )
    .min(1, "list at least one model (name, and optionally context_tokens and price)"),
});

/** The sections that are not platforms; each platform module adds its own. */
const agentName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, "lowercase letters, digits, '-' or '_', at most 32");

/** One entry of `agents:`: a further agent, each field falling back to the top-level settings. */
const agentSchema = z.strictObject({
  name: agentName,
  /** Its SOUL.md. @defaultValue `agents/<name>/SOUL.md` when it exists, else HERALD_HOME/SOUL.md */
  soul: optionalString,
  /** Extra system prompt text. @defaultValue `agent.persona` */
  persona: optionalString,
  /** Its MEMORY.md and USER.md (and its other users' under `users/`). @defaultValue `agents/<name>/memories` */
  memoryDir: optionalString,
  /** Its toolsets. @defaultValue the platform's, else `agent.toolsets` */
  toolsets: z.array(z.string()).optional(),
  /** Its model (`provider/model` or a bare name). @defaultValue `model.default` */
  model: optionalString,
  /**
   * The external memory providers it uses (`memory.providers`): `false` none, or a list of their names.
   * Each has the agent's own records there (Honcho workspace `<workspace>-<name>`, Mem0 `agent_id`
   * `<agent_id>-<name>`). @defaultValue every configured provider
   */
  memoryProviders: z.union([z.literal(false), z.array(z.enum(["honcho", "mem0"]))]).optional(),
  /** Its skills folder: the skills it lists, reads, writes and learns. @defaultValue the shared `HERALD_HOME/skills` */
  skillsDir: optionalString,
  /**
   * Where its commands run (`local` runs them on this host, unsandboxed); the backend's own settings
   * (`exec.ssh`, `exec.docker`, a cloud provider's, the limits) are the `exec` section's.
   * @defaultValue `exec.backend`
   */
  execBackend: z.enum(BACKEND_NAMES).optional(),
  /** Where its workspaces live. @defaultValue `agents/<name>/workspaces` */
  workspaceRoot: optionalString,
});

/** One entry of `routes:`: which agent answers the messages it matches (first match wins). */
const routeSchema = z.strictObject({
  agent: z.string().min(1),
  /** A platform (`telegram`: every account of it) or one bot account (`telegram@family`). */
  platform: optionalString,
  /** A chat or group: its chat string (`telegram:-100123`) or its bare id. */
  chat: optionalString,
  /** `dm` or `group`. */
  chatType: z.enum(["dm", "group"]).optional(),
  /** A sender: `platform:id` or a bare id. */
  user: optionalString,
});

/** The kernel's sections: every setting that is not a platform's or a feature's. */
export const kernelShape = {
  /** IANA zone for daily resets and cron. @defaultValue the process's zone */
  timezone: z.string().default(systemTimeZone()),
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
          "browser",
          "image",
          "code",
          "messaging",
          "delegate",
          "tasks",
          "ha",
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
      /** Days a stored `/v1/responses` response stays readable and continuable (`previous_response_id`). */
      responsesTtlDays: z.number().int().min(1).max(3650).default(30),
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
  /** Further agents (profiles) beside the default one, which is the top-level config. */
  agents: z.array(agentSchema).default([]),
  /** Which agent answers where: the first matching route's; the default agent where none matches. */
  routes: z.array(routeSchema).default([]),
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

/** Kernel env names and the config path each sets (snake_case, from the top of config.yaml). */
export const kernelEnv: Readonly<Record<string, readonly [path: string, kind: EnvKind]>> = {
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
  REDIS_URL: ["queue.redis_url", "string"],
  HERALD_CONCURRENCY: ["queue.concurrency", "int"],
  HERALD_QUEUE_PREFIX: ["queue.prefix", "string"],
  HERALD_QUEUE_LOCK_DURATION_MS: ["queue.lock_duration_ms", "int"],
  HERALD_GATEWAY_URL: ["gateway_client.url", "url"],
  HERALD_GATEWAY_KEY: ["gateway_client.key", "string"],
  API_SERVER_ENABLED: ["api_server.enabled", "bool"],
  API_SERVER_HOST: ["api_server.host", "string"],
  API_SERVER_PORT: ["api_server.port", "int"],
  API_SERVER_KEY: ["api_server.key", "string"],
  API_SERVER_CORS_ORIGINS: ["api_server.cors_origins", "list"],
  API_SERVER_RESPONSES_TTL_DAYS: ["api_server.responses_ttl_days", "int"],
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
};
