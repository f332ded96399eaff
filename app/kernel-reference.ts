/**
 * The kernel's sections of docs/configuration.md: for each (the top level, model, providers, queue …)
 * what its keys mean, and the defaults the schema cannot show (app/kernel-settings.ts has the schema).
 */
import type { ConfigReference } from "../core/settings.js";

/** One kernel section of the reference: its key in config.yaml (`""`: the top level) and its rows. */
export interface KernelSection {
  readonly key: string;
  readonly reference: ConfigReference;
}

/** The kernel's sections of docs/configuration.md, in page order. */
export const kernelReference: readonly KernelSection[] = [
  {
    key: "",
    reference: {
      title: "Top level",
      rows: [
        ["timezone", "IANA zone of daily resets and cron schedules", "the process's zone"],
        ["log_level", "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`"],
        ["log_format", "stdout's lines: `auto` (pretty on a terminal, JSON otherwise), `pretty`, `json`"],
        ["log_max_bytes", "`logs/herald.log` (`worker.log`) rotates past this size"],
        ["log_files", "rotated files kept; `0` writes no log file"],
      ],
    },
  },
  {
    key: "model",
    reference: {
      rows: [
        ["base_url", "the OpenAI-compatible endpoint of the provider `default`"],
        ["api_key", "its key"],
        ["name", "the model on that endpoint"],
        [
          "default",
          "the default model as `provider/model` or a bare name",
          "`model.name`, or the first provider's first model when only `providers` are set",
        ],
        ["fallbacks", "comma list of model references tried in order when a call fails after its retries"],
        ["context_tokens", "the context window; compression starts near it"],
        ["max_iterations", "model calls per turn at most"],
        ["timeout_ms", "wait for the model's answer (504 `model_timeout` on the API server)"],
        ["max_retries", "retries of 429, 5xx, timeouts and dropped connections before the next fallback"],
        ["vision", "the main model accepts images"],
      ],
    },
  },
  {
    key: "providers",
    reference: {
      intro:
        "A list; each entry is one endpoint speaking one wire protocol. See [Models and providers](models-and-providers.md).",
      rows: [
        ["[].name", "letters, digits, `.`, `_`, `-`; the prefix of `provider/model` references"],
        [
          "[].api",
          "the wire protocol: `openai-chat` (any OpenAI-compatible server), `openai-responses` (OpenAI's Responses API: reasoning items kept across tool calls), `anthropic` (Anthropic Messages: prompt caching, extended thinking), `gemini` (Google's Gemini API: thinking budget, thought signatures) or `bedrock` (Amazon Bedrock's Converse API: AWS credentials, cache points, Claude's extended thinking)",
          "`anthropic` for api.anthropic.com, `gemini` for generativelanguage.googleapis.com, `bedrock` for bedrock-runtime.<region>.amazonaws.com, else `openai-chat`",
        ],
        [
          "[].base_url",
          "the endpoint",
          "required, but for `api: anthropic` and `api: gemini` (their vendors' endpoints) and `api: bedrock` (the endpoint of `AWS_REGION`)",
        ],
        [
          "[].api_key_env",
          "the variable (environment or `.env`) holding the key; the key never goes in `config.yaml`",
          "none",
          "the name given",
        ],
        ["[].headers", "extra request headers (OpenRouter's `HTTP-Referer`, `X-Title`)"],
        ["[].models[].name", "the model's name at the provider"],
        ["[].models[].context_tokens", "its context window", "`model.context_tokens`"],
        [
          "[].models[].price",
          "`{input, output, cached, cache_write}` in US dollars per million tokens, for `/usage` (`cached`: prompt read from the cache; `cache_write`: written to it, Anthropic)",
        ],
        [
          "[].models[].reasoning",
          "reasons on request (`/reasoning`): `reasoning_effort` on chat, extended thinking on Anthropic",
          "`false`",
        ],
        [
          "[].models[].thinking_budget",
          "the thinking budget in tokens (Anthropic, Gemini), at least 1024",
          "by effort: 2,048 / 8,192 / 24,576",
        ],
        [
          "[].models[].max_output_tokens",
          "the longest answer in tokens, thinking excluded (Anthropic; Gemini when set)",
          "8,192",
        ],
        ["[].models[].vision", "accepts images", "`false`"],
        [
          "[].models[].cache_control",
          "send explicit prompt-cache markers (`cache_control` breakpoints)",
          "on for `api: anthropic` and for Anthropic models on OpenRouter",
        ],
      ],
    },
  },
  {
    key: "auxiliary",
    reference: {
      rows: [
        ["compression", "writes the summary when a long conversation is compressed", "the session's model"],
        [
          "review",
          "runs the learning review (memory and skills)",
          "`learning.model`, else the default model",
        ],
      ],
    },
  },
  {
    key: "agent",
    reference: {
      rows: [
        ["persona", "extra system prompt text; `HERALD_HOME/SOUL.md` replaces it when present"],
        ["toolsets", "the toolsets enabled by default; `<platform>.toolsets` overrides per platform"],
      ],
    },
  },
  {
    key: "tools",
    reference: {
      rows: [
        [
          "lazy",
          "send only the eager toolsets' schemas; the rest are listed in the prompt and loaded on demand",
        ],
        ["eager", "toolsets whose schemas every request carries (when enabled)"],
        [
          "eager_for",
          "`eager` per platform (`telegram`) or platform and chat type (`telegram:group`; the more specific wins)",
        ],
      ],
    },
  },
  {
    key: "queue",
    reference: {
      rows: [
        [
          "redis_url",
          "`redis://` or `rediss://`; turns and cron go through BullMQ",
          "none (the embedded queue)",
        ],
        ["concurrency", "turns run at once per process (`herald worker --concurrency` overrides)"],
        ["prefix", "Redis key prefix"],
        ["lock_duration_ms", "a killed worker's turn runs again elsewhere after about this long"],
      ],
    },
  },
  {
    key: "gateway_client",
    reference: {
      intro: "What a `herald worker` on another machine needs to reach the gateway.",
      rows: [
        ["url", "the gateway's HTTP address"],
        ["key", "the state API's bearer key; required on the gateway and the workers with `REDIS_URL`"],
      ],
    },
  },
  {
    key: "api_server",
    reference: {
      rows: [
        ["enabled", "serve `/v1/*` (and `/mcp`)"],
        ["host", "the HTTP server's address (API, dashboard, webhooks, health)"],
        ["port", ""],
        [
          "key",
          "bearer key of the API and `/mcp`; required when the host is not loopback; without it the server answers only a loopback `Host` and its own `Origin` ([Security](security.md#http-surfaces))",
        ],
        [
          "cors_origins",
          "origins (`scheme://host[:port]`, e.g. `http://localhost:3000`) whose web pages may call the API and `/mcp`: their CORS preflight is answered; `*` and `null` are refused",
        ],
        [
          "responses_ttl_days",
          "days a stored `/v1/responses` response stays readable (`GET /v1/responses/{id}`) and continuable (`previous_response_id`); expired ones are deleted",
        ],
      ],
    },
  },
  {
    key: "agents",
    reference: {
      intro:
        "Further agents beside the default one (the top-level config), each with its own SOUL.md, memory, toolsets, model, skills, execution backend and workspaces; a list. Paths are relative to `HERALD_HOME`. See [Agents and bot accounts](agents.md).",
      rows: [
        [
          "[].name",
          "lowercase letters, digits, `-`, `_`; names the agent in `routes`, `/agent` and its session keys",
        ],
        [
          "[].soul",
          "its SOUL.md (relative to `HERALD_HOME`)",
          "`agents/<name>/SOUL.md`, while missing `[].persona`, else `SOUL.md`",
        ],
        ["[].persona", "its persona text where it has no SOUL.md", "`agent.persona`"],
        [
          "[].memory_dir",
          "its MEMORY.md and USER.md (its other users' under `users/`)",
          "`agents/<name>/memories`",
        ],
        ["[].toolsets", "its toolsets", "the platform's `toolsets`, else `agent.toolsets`"],
        [
          "[].model",
          "its model (`provider/model` or a bare name); a chat's `/model` choice wins",
          "`model.default`",
        ],
        [
          "[].memory_providers",
          "the external memory providers it uses: `false` (none) or a list (`[honcho]`). Its records there are its own: Honcho workspace `<workspace>-<name>`, Mem0 `agent_id` `<agent_id>-<name>`",
          "every provider `memory.providers` configures",
        ],
        [
          "[].skills_dir",
          "its skills folder: the skills its prompt lists, `skills_list`, `skill_view` and `/skills` show, and `skill_manage` and learning write",
          "the shared `skills/`",
        ],
        [
          "[].exec_backend",
          "where its commands run: `sandbox`, `local` (this host, unsandboxed), `ssh`, `docker`, `daytona`, `e2b`, `modal`, `vercel`; the backend's settings are the `exec` section's",
          "`exec.backend`",
        ],
        [
          "[].workspace_root",
          "where its workspaces live; a folder of workspaces alone (unused ones are deleted after `exec.workspace_retention_days`)",
          "`agents/<name>/workspaces`",
        ],
      ],
    },
  },
  {
    key: "routes",
    reference: {
      intro:
        "Which agent answers where; a list, the first route whose every given field matches wins, the default agent where none does. An owner's `/agent <name>` in a chat wins over the routes.",
      rows: [
        ["[].agent", "an agent's name, or `default`"],
        [
          "[].platform",
          "a platform (`telegram`: every bot account of it) or one bot account (`telegram@family`)",
          "any",
        ],
        [
          "[].chat",
          "a chat or group: its chat string (`telegram:-100123`, its topics included) or its bare id",
          "any",
        ],
        ["[].chat_type", "`dm` or `group`", "any"],
        ["[].user", "a sender: `platform:id` or a bare id", "any"],
      ],
    },
  },
  {
    key: "access",
    reference: {
      rows: [
        [
          "allowed_users",
          "users admitted on every platform: `platform:id` or a bare id; owners too while `access.owners` is unset",
        ],
        ["allow_all_users", "admit everyone"],
        [
          "owners",
          "when set, the only chat users who are owners (`platform:id` entries; they are admitted too): they send anywhere, run owner-only commands, get owners-only MCP servers and plugins, and hear about provider key failures; see [Security](security.md#owners)",
          "none (everyone on an allowlist is an owner)",
        ],
      ],
    },
  },
  {
    key: "sessions",
    reference: {
      rows: [
        ["reset.mode", "`idle`, `daily`, `both`, `none`"],
        ["reset.idle_minutes", "an idle session ends after this long"],
        ["reset.at_hour", "the daily reset's hour in `timezone`"],
        ["group_sessions", "`per_user` or `shared`; see [Groups and sessions](groups-and-sessions.md)"],
        [
          "busy_policy",
          "a message during a running turn `interrupt`s it or waits (`queue`); the API server always queues",
        ],
      ],
    },
  },
  {
    key: "media",
    reference: {
      rows: [
        ["max_bytes", "larger inbound files are not downloaded (the agent is told)"],
        [
          "retention_days",
          "files under `HERALD_HOME/cache` older than this are deleted, never one a waiting turn or an undelivered reply needs",
        ],
      ],
    },
  },
];
