/**
 * `herald doctor`: lists what is configured and checks it for real — the model endpoint answers a
 * request, the state file is writable, Redis answers when configured — then asks each configured
 * platform's module (for its own section and for each of its bot accounts), lists the agents with
 * their routes, and asks each feature's declaration for its own lines (the execution backend, web search,
 * voice, the MCP servers, the plugins …), printing each problem with its fix.
 */
import { join } from "node:path";
import OpenAI from "openai";
import { checkExec } from "../agent/exec/settings.js";
import { createCatalog, createModelClient, modelConfigProblem } from "../agent/index.js";
import { apiOf, LEGACY_PROVIDER, ProviderCatalog, type ResolvedModel } from "../agent/providers/index.js";
import { ConfigError, describeError } from "../core/errors.js";
import type { DoctorContext, DoctorLine } from "../core/settings.js";
import { SqliteState } from "../sessions/index.js";
import {
  configuredAccounts,
  configuredPlatforms,
  type HeraldConfig,
  isLoopbackHost,
  loadConfig,
  sectionOf,
} from "./config.js";
import { accountLines, agentLines } from "./doctor-agents.js";
import { features } from "./features.js";

export type { DoctorLine } from "../core/settings.js";

/** Runs every check; never throws. */
export async function runDoctor(env: NodeJS.ProcessEnv = process.env): Promise<DoctorLine[]> {
  const lines: DoctorLine[] = [];
  let config: HeraldConfig;
  try {
    config = loadConfig({ env });
  } catch (err) {
    const key = err instanceof ConfigError ? err.key : "config";
    return [{ ok: false, text: `configuration: ${describeError(err)}`, fix: `correct ${key}` }];
  }
  lines.push({ ok: true, text: `HERALD_HOME: ${config.homeDir}` });
  let catalog: ProviderCatalog;
  try {
    catalog = createCatalog(config);
  } catch (err) {
    const key = err instanceof ConfigError ? err.key : "providers";
    return [...lines, { ok: false, text: `providers: ${describeError(err)}`, fix: `correct ${key}` }];
  }
  const main = catalog.resolve(catalog.defaultModel);
  // The legacy endpoint with no key for a hosted API: nothing can work (providers check their keys at load).
  const modelProblem =
    main?.provider.name === LEGACY_PROVIDER || !main ? modelConfigProblem(config.model) : undefined;
  lines.push({
    ok: !modelProblem,
    ...(modelProblem ? { fix: modelProblem } : {}),
    text: `model: ${catalog.defaultModel} at ${main?.provider.baseUrl ?? config.model.baseUrl}${config.model.fallbacks.length ? ` (fallbacks: ${config.model.fallbacks.join(", ")})` : ""}${!main || main.provider.name === LEGACY_PROVIDER ? (config.model.apiKey ? ", key set" : ", no key") : ""}`,
  });
  if (config.providers.length) {
    lines.push({
      ok: true,
      text: `providers: ${config.providers.map((p) => `${p.name} (${p.models.length} model${p.models.length === 1 ? "" : "s"}${p.apiKeyEnv ? `, key from ${p.apiKeyEnv}` : ""})`).join(", ")}`,
    });
  }
  lines.push({
    ok: true,
    text: `queue: ${config.queue.redisUrl ? "Redis (BullMQ)" : `embedded, ${config.queue.concurrency} turns at a time`}`,
  });
  lines.push({
    ok: true,
    text: config.apiServer.enabled
      ? `API server: http://${config.apiServer.host}:${config.apiServer.port} (${config.apiServer.key ? "key required" : "no key, loopback only"})`
      : "API server: disabled",
  });
  const platforms = configuredPlatforms(config);
  const accounts = configuredAccounts(config);
  const withAccounts = (name: string) => {
    const own = accounts.filter((a) => a.module.name === name).map((a) => a.name);
    return own.length ? `${name} (bot accounts: ${own.join(", ")})` : name;
  };
  lines.push({
    ok: true,
    text: `platforms: ${platforms.length ? platforms.map((m) => withAccounts(m.name)).join(", ") : "none (API server only)"}`,
  });
  const context: DoctorContext = { homeDir: config.homeDir };
  for (const module of platforms) {
    if (module.doctor) lines.push(...(await module.doctor(sectionOf(config, module), context)));
  }
  lines.push(...(await accountLines(config, context)), ...agentLines(config));
  if (accounts.length > 0) {
    const names = accounts.map((a) => a.name);
    lines.push({
      ok: true,
      text: `bot accounts: ${names.join(", ")} (one on webhooks is served at /webhooks/${names[0]})`,
    });
  }
  const lists = platforms
    .filter((m) => (config.platforms[m.name]?.allowedUsers ?? []).length > 0)
    .map((m) => m.name);
  if (config.access.allowAllUsers) {
    lines.push({ ok: true, text: "access: everyone (GATEWAY_ALLOW_ALL_USERS=true)" });
  } else if (!config.access.allowedUsers.length && !lists.length && platforms.length) {
    lines.push({
      ok: true,
      text: "access: no allowlist; unknown users get a pairing code",
      fix: "approve them with `herald pairing approve <code>`, or set GATEWAY_ALLOWED_USERS",
    });
  } else {
    const scopes = [...(config.access.allowedUsers.length ? ["all platforms"] : []), ...lists];
    lines.push({
      ok: true,
      text: scopes.length
        ? `access: allowlists for ${scopes.join(", ")}`
        : "access: API server only (its key is the access control)",
    });
  }
  if (config.apiServer.enabled && !isLoopbackHost(config.apiServer.host) && !config.apiServer.key) {
    lines.push({
      ok: false,
      text: "API server is reachable from other machines without a key",
      fix: "set API_SERVER_KEY",
    });
  }
  // Without a model there is nothing to ask (and no wait for a request that cannot succeed).
  if (!modelProblem) lines.push(await checkModel(config, main));
  lines.push(checkState(config));
  if (config.queue.redisUrl) lines.push(...(await checkRedis(config)));
  // Each feature's own checks, in the feature list's order (each reads only its own section).
  const sections = config as unknown as Record<string, unknown>;
  for (const feature of features) {
    if (feature.doctor) lines.push(...(await feature.doctor(sections[feature.key], context)));
  }
  lines.push(...(await checkAgentBackends(config)));
  return lines;
}

/** The exec backend of each further agent that has its own (`agents[].exec_backend`), checked as `exec.backend` is. */
async function checkAgentBackends(config: HeraldConfig): Promise<DoctorLine[]> {
  const lines: DoctorLine[] = [];
  for (const backend of new Set(config.agents.map((a) => a.execBackend))) {
    if (!backend || backend === config.exec.backend) continue;
    const agents = config.agents.filter((a) => a.execBackend === backend).map((a) => a.name);
    const line = await checkExec({ ...config.exec, backend });
    lines.push({ ...line, text: `agents ${agents.join(", ")}: ${line.text}` });
  }
  return lines;
}

async function checkModel(config: HeraldConfig, main: ResolvedModel | undefined): Promise<DoctorLine> {
  if (main && apiOf(main.provider) !== "openai-chat") return checkModelNatively(config, main);
  // The default model's provider; the legacy endpoint's settings are the env variables.
  const provider = main?.provider;
  const legacy = !provider || provider.name === LEGACY_PROVIDER;
  const baseUrl = provider?.baseUrl ?? config.model.baseUrl;
  const model = main?.model ?? config.model.name;
  const client = new OpenAI({
    baseURL: baseUrl,
    apiKey: (legacy ? config.model.apiKey : provider.apiKey) ?? "none",
    maxRetries: 0,
    timeout: 20_000,
    defaultHeaders: provider?.headers ? { ...provider.headers } : undefined,
  });
  const keyName = legacy
    ? "OPENAI_API_KEY"
    : (provider.apiKeyEnv ?? `provider '${provider.name}''s api_key_env`);
  try {
    await client.chat.completions.create({
      model,
      messages: [{ role: "user", content: "ping" }],
      max_tokens: 1,
    });
    return { ok: true, text: `model endpoint answered a request (${main?.ref ?? model})` };
  } catch (err) {
    const status = (err as { status?: number }).status;
    const fix =
      status === 401 || status === 403
        ? `check ${keyName}`
        : status === 404
          ? legacy
            ? `check HERALD_MODEL (is '${model}' served at ${baseUrl}?)`
            : `check model.default (is '${model}' served at ${baseUrl}?)`
          : status
            ? "the endpoint answered with an error; check its logs"
            : legacy
              ? "check OPENAI_BASE_URL and that the endpoint is running"
              : `check the base_url of provider '${provider.name}' and that the endpoint is running`;
    return {
      ok: false,
      text: `model endpoint failed: ${status ? `HTTP ${status}` : describeError(err)}`,
      fix,
    };
  }
}

/**
 * The default model asked once through its own protocol's transport (Anthropic, Gemini, Responses),
 * for at most a token of answer where the protocol takes a limit; no retry, no fallback.
 */
async function checkModelNatively(config: HeraldConfig, main: ResolvedModel): Promise<DoctorLine> {
  const provider = main.provider;
  const info = { ...(main.info ?? { name: main.model }), maxOutputTokens: 1, reasoning: false };
  const only = { ...provider, models: [info] };
  const catalog = new ProviderCatalog({
    providers: [only],
    defaultModel: main.ref,
    contextTokens: config.model.contextTokens,
    vision: false,
  });
  const client = createModelClient({
    ...config.model,
    name: main.ref,
    fallbacks: [],
    catalog,
    maxRetries: 0,
    timeoutMs: 20_000,
  });
  const api = apiOf(provider);
  try {
    await client.streamChat({ model: main.ref, messages: [{ role: "user", content: "ping" }] });
    return { ok: true, text: `model endpoint answered a request (${main.ref}, ${api})` };
  } catch (err) {
    const status = (err as { status?: number }).status;
    return {
      ok: false,
      text: `model endpoint failed (${api}): ${status ? `HTTP ${status}` : describeError(err)}`,
      fix: err instanceof Error ? err.message : String(err),
    };
  }
}

function checkState(config: HeraldConfig): DoctorLine {
  const path = join(config.homeDir, "state.db");
  try {
    const state = SqliteState.open(path);
    const kv = state.kv("doctor");
    kv.set("check", String(Date.now()));
    kv.delete("check");
    state.close();
    return { ok: true, text: `state file is writable (${path})` };
  } catch (err) {
    return {
      ok: false,
      text: `state file ${path} is not writable: ${describeError(err)}`,
      fix: "check HERALD_HOME's permissions and free disk space",
    };
  }
}

async function checkRedis(config: HeraldConfig): Promise<DoctorLine[]> {
  const { Redis } = await import("ioredis");
  const redis = new Redis(config.queue.redisUrl!, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    retryStrategy: () => null,
  });
  const lines: DoctorLine[] = [];
  try {
    await redis.connect();
    await redis.ping();
    lines.push({ ok: true, text: "Redis answered PING" });
  } catch (err) {
    redis.disconnect();
    return [
      {
        ok: false,
        text: `Redis at REDIS_URL did not answer: ${describeError(err)}`,
        fix: "start Redis or correct REDIS_URL",
      },
    ];
  }
  try {
    const { Queue } = await import("bullmq");
    const queue = new Queue("turns", { connection: redis, prefix: config.queue.prefix });
    const workers = await queue.getWorkersCount();
    await queue.close();
    lines.push(
      workers > 0
        ? { ok: true, text: `${workers} worker(s) consume the Redis queue` }
        : {
            ok: false,
            text: "0 workers consume the Redis queue: with REDIS_URL the gateway runs no turns itself",
            fix: "start `herald worker` (with HERALD_GATEWAY_URL and HERALD_GATEWAY_KEY) on this or another machine",
          },
    );
  } catch (err) {
    lines.push({ ok: false, text: `could not count the workers on Redis: ${describeError(err)}` });
  } finally {
    redis.disconnect();
  }
  if (!config.gatewayClient.key) {
    lines.push({
      ok: false,
      text: "HERALD_GATEWAY_KEY is not set: workers cannot reach the gateway's state API (the gateway refuses to start)",
      fix: "set HERALD_GATEWAY_KEY to a long random string on the gateway and every worker",
    });
  }
  return lines;
}

/** Prints the lines; returns the process exit code (1 when any check failed). */
export function printDoctor(lines: DoctorLine[], out: NodeJS.WritableStream = process.stdout): number {
  for (const line of lines) {
    out.write(`${line.ok ? "✓" : "✗"} ${line.text}\n`);
    if (line.fix) out.write(`    fix: ${line.fix}\n`);
  }
  const problems = lines.filter((l) => !l.ok).length;
  out.write(problems ? `\n${problems} problem(s) found.\n` : "\nAll checks passed.\n");
  return problems ? 1 : 0;
}
