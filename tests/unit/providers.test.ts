/**
 * The provider catalog, the model client's chain across providers (against two fake model servers),
 * the agent loop's answer to "context too long", prompt-cache markers and the config of providers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCatalog } from "../../agent/configured-model.js";
import { runTurn } from "../../agent/loop.js";
import { createModelClient, requestBody } from "../../agent/model-client.js";
import { apiOf, ProviderCatalog, wantsCacheMarkers } from "../../agent/providers/catalog.js";
import { SessionModelStore } from "../../agent/providers/settings.js";
import { ToolRegistry } from "../../agent/tool-registry.js";
import { loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";
import { silentLogger } from "../../core/logger.js";
import type { ProviderAlert, TurnJob } from "../../core/turn.js";
import type { ChatMessage } from "../../core/types.js";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";

let a: FakeLlm;
let b: FakeLlm;
beforeEach(async () => {
  a = await startFakeLlm();
  b = await startFakeLlm();
});
afterEach(async () => {
  await a.close();
  await b.close();
});

function catalog(defaultModel = "one/m1") {
  return new ProviderCatalog({
    providers: [
      {
        name: "one",
        baseUrl: a.url,
        apiKey: "k1",
        apiKeyEnv: "ONE_KEY",
        models: [
          { name: "m1", price: { input: 3, output: 15, cached: 0.3 }, contextTokens: 200_000 },
          { name: "m1-mini" },
        ],
      },
      { name: "two", baseUrl: b.url, models: [{ name: "vendor/m2", reasoning: true }] },
    ],
    legacy: { name: "default", baseUrl: "http://127.0.0.1:9/v1", models: [] },
    defaultModel,
    contextTokens: 128_000,
    vision: false,
  });
}

function client(fallbacks: string[], defaultModel?: string) {
  return createModelClient({
    baseUrl: "http://127.0.0.1:9/v1",
    name: "unused",
    fallbacks,
    catalog: catalog(defaultModel),
    contextTokens: 128_000,
    maxIterations: 10,
    timeoutMs: 10_000,
    maxRetries: 2,
    vision: false,
    retryBaseDelayMs: 2,
    retryMaxDelayMs: 5,
  });
}

const user = (text: string): ChatMessage => ({ role: "user", content: text });

describe("the provider catalog", () => {
  it("resolves provider/model, declared bare names (slashes and all), and the legacy endpoint for the rest", () => {
    const c = catalog();
    expect(c.resolve("one/m1")).toMatchObject({ ref: "one/m1", model: "m1", provider: { name: "one" } });
    expect(c.resolve("vendor/m2")).toMatchObject({ ref: "two/vendor/m2", model: "vendor/m2" });
    expect(c.resolve("two/vendor/m2")?.info?.reasoning).toBe(true);
    // A name nobody declares goes to the legacy endpoint under its bare name, as before providers.
    expect(c.resolve("gpt-4o")).toMatchObject({ ref: "gpt-4o", provider: { name: "default" } });
    expect(c.contextTokens("one/m1")).toBe(200_000);
    expect(c.contextTokens("one/m1-mini")).toBe(128_000);
  });

  it("prices uncached prompt, cached prompt and completion tokens apart", () => {
    const cost = catalog().costOf({
      model: "one/m1",
      promptTokens: 1_000_000,
      cachedTokens: 400_000,
      completionTokens: 100_000,
    });
    expect(cost).toBeCloseTo(0.6 * 3 + 0.4 * 0.3 + 0.1 * 15, 10);
    expect(
      catalog().costOf({ model: "one/m1-mini", promptTokens: 5, cachedTokens: 0, completionTokens: 5 }),
    ).toBe(undefined);
  });

  it("marks the system prompt and the last stable message for Anthropic models on OpenRouter only", () => {
    const openrouter = new ProviderCatalog({
      providers: [
        {
          name: "or",
          baseUrl: "https://openrouter.ai/api/v1",
          models: [{ name: "anthropic/claude-sonnet-4" }, { name: "openai/gpt-4o" }],
        },
      ],
      defaultModel: "or/anthropic/claude-sonnet-4",
      contextTokens: 1000,
      vision: false,
    });
    expect(wantsCacheMarkers(openrouter.resolve("or/anthropic/claude-sonnet-4")!)).toBe(true);
    expect(wantsCacheMarkers(openrouter.resolve("or/openai/gpt-4o")!)).toBe(false);
    expect(wantsCacheMarkers(catalog().resolve("one/m1")!)).toBe(false);

    const messages: ChatMessage[] = [
      { role: "system", content: "system prompt" },
      user("old question"),
      { role: "assistant", content: "old answer" },
      user("new question"),
    ];
    const body = JSON.parse(
      requestBody("anthropic/claude-sonnet-4", { messages, stableCount: 3 }, { cacheMarkers: true }),
    );
    const marker = { type: "ephemeral" };
    expect(body.messages[0].content).toEqual([
      { type: "text", text: "system prompt", cache_control: marker },
    ]);
    expect(body.messages[1].content).toBe("old question");
    expect(body.messages[2].content).toEqual([{ type: "text", text: "old answer", cache_control: marker }]);
    expect(body.messages[3].content).toBe("new question");
    // Without markers the body is as before.
    expect(JSON.parse(requestBody("m", { messages })).messages).toEqual(messages);
  });
});

describe("per-session model settings", () => {
  it("bind a choice made before the session existed to the session that opens next, and end with it", () => {
    const map = new Map<string, string>();
    const store = new SessionModelStore({
      get: (k) => map.get(k),
      set: (k, v) => void map.set(k, v),
      delete: (k) => void map.delete(k),
    });
    store.set("key", undefined, { model: "two/vendor/m2" });
    expect(store.get("key", "s1", true)).toMatchObject({ model: "two/vendor/m2" });
    // Bound now: the session after it starts from the defaults.
    expect(store.get("key", "s2")).toEqual({});
    expect(store.get("key", "s1")).toMatchObject({ model: "two/vendor/m2" });
    store.set("key", "s1", { reasoning: "high" });
    expect(store.get("key", "s1")).toMatchObject({ model: "two/vendor/m2", reasoning: "high" });
    store.set("key", "s1", { model: undefined });
    expect(store.get("key", "s1")).toEqual({ sessionId: "s1", reasoning: "high" });
    expect(store.get("other-key", "s1")).toEqual({});
  });
});

describe("the model client across providers", () => {
  it("falls back to another provider's model after the retries, and reports the tokens the provider served from cache", async () => {
    a.setDefault(() => ({ error: { status: 503 } }));
    const result = await client(["two/vendor/m2"]).streamChat({ messages: [user("hi")] });
    expect(result.model).toBe("two/vendor/m2");
    expect(a.requests.map((r) => r.model)).toEqual(["m1", "m1", "m1"]);
    expect(b.requests.map((r) => r.model)).toEqual(["vendor/m2"]);
    expect(result.usage).toEqual({
      promptTokens: b.usages[0]!.prompt_tokens,
      completionTokens: b.usages[0]!.completion_tokens,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
    const again = await client([], "two/vendor/m2").streamChat({ messages: [user("hi")] });
    expect(again.usage.cachedTokens).toBe(b.usages[1]!.prompt_tokens_details?.cached_tokens);
  });

  it("on 401 raises one alert, skips the provider's other models without retries, and goes on to the next provider", async () => {
    a.setDefault(() => ({ error: { status: 401, message: "Incorrect API key provided." } }));
    const alerts: ProviderAlert[] = [];
    const result = await client(["one/m1-mini", "two/vendor/m2"]).streamChat({
      messages: [user("hi")],
      onAlert: (alert) => alerts.push(alert),
    });
    expect(result.model).toBe("two/vendor/m2");
    expect(a.requests).toHaveLength(1);
    expect(alerts).toEqual([
      {
        provider: "one",
        model: "one/m1",
        status: 401,
        message: "The model endpoint answered 401: check ONE_KEY.",
      },
    ]);
  });

  it("falls back to another provider when the first does not answer in time", async () => {
    a.setDefault(() => ({ text: "too late", delayMs: 2_000 }));
    const slow = createModelClient({
      baseUrl: "http://127.0.0.1:9/v1",
      name: "unused",
      fallbacks: ["two/vendor/m2"],
      catalog: catalog(),
      contextTokens: 128_000,
      maxIterations: 10,
      timeoutMs: 150,
      maxRetries: 1,
      vision: false,
      retryBaseDelayMs: 2,
    });
    const result = await slow.streamChat({ messages: [user("hurry")] });
    expect(result.model).toBe("two/vendor/m2");
    expect(result.message.content).toBe("echo: hurry");
    expect(a.requests).toHaveLength(2);
  });

  it("on 403 (this model not allowed for the key) raises an alert and still tries the provider's other models", async () => {
    a.script(
      { model: "m1", error: { status: 403, message: "not allowed" } },
      { model: "m1-mini", text: "mini here" },
    );
    const alerts: ProviderAlert[] = [];
    const result = await client(["one/m1-mini"]).streamChat({
      messages: [user("hi")],
      onAlert: (alert) => alerts.push(alert),
    });
    expect(result.model).toBe("one/m1-mini");
    expect(alerts.map((x) => [x.model, x.status])).toEqual([["one/m1", 403]]);
    expect(alerts[0]?.message).toBe(
      "The model endpoint answered 403 (forbidden) for model 'one/m1': check that ONE_KEY may use it.",
    );
  });

  it("sends reasoning_effort only to a model that declares reasoning", async () => {
    await client([], "two/vendor/m2").streamChat({ messages: [user("x")], reasoningEffort: "medium" });
    await client([]).streamChat({ messages: [user("x")], reasoningEffort: "medium" });
    expect(b.requests[0]?.["reasoning_effort"]).toBe("medium");
    expect(a.requests[0]).not.toHaveProperty("reasoning_effort");
  });

  it("names an unknown model and how to fix it", async () => {
    const lonely = createModelClient({
      baseUrl: a.url,
      name: "x",
      fallbacks: [],
      catalog: new ProviderCatalog({ providers: [], defaultModel: "x", contextTokens: 1000, vision: false }),
      contextTokens: 1000,
      maxIterations: 1,
      timeoutMs: 1000,
      maxRetries: 0,
      vision: false,
    });
    await expect(lonely.streamChat({ messages: [user("x")] })).rejects.toThrow(
      "No configured provider serves the model 'x'",
    );
  });
});

describe("a context the model says is too long", () => {
  const big = (tag: string) => `${tag} ${"words ".repeat(300)}`;
  const history: ChatMessage[] = [];
  for (let i = 1; i <= 10; i++)
    history.push(user(big(`question-${i}`)), { role: "assistant", content: `answer-${i}` });

  function job(): TurnJob {
    return {
      kind: "turn",
      turnId: "t1",
      origin: {
        sessionId: "s1",
        sessionKey: "api:dm:u1",
        chat: { platform: "api", chatId: "u1" },
        chatType: "dm",
        userId: "u1",
      },
      history: history.map((message, i) => ({ seq: i + 1, message })),
      input: { text: "and now?" },
      systemPrompt: "You are a test assistant.",
      toolsets: [],
      createdAt: 0,
    };
  }

  it("compresses the history with the auxiliary model, then retries once and answers", async () => {
    a.script(
      { error: { status: 400, message: "This model's maximum context length is 2048 tokens." } },
      { text: "answered after compression" },
    );
    b.script({ text: "SUMMARY of the early questions" });
    const result = await runTurn(job(), {
      model: client([]),
      compressionModel: "two/vendor/m2",
      tools: new ToolRegistry(),
      state: { searchSessions: async () => [] },
      logger: silentLogger(),
      homeDir: "/tmp",
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    expect(result.kind).toBe("ok");
    if (result.kind !== "ok") return;
    expect(result.reply.text).toBe("answered after compression");
    expect(result.compaction?.summary).toBe("SUMMARY of the early questions");
    // The summary was written by the auxiliary model; the retry carried it instead of the middle.
    expect(messageText(b.requests[0]!.messages.at(-1))).toContain("question-2");
    const retry = a.requests[1]!.messages.map((m) => messageText(m));
    expect(retry.some((t) => t.includes("SUMMARY of the early questions"))).toBe(true);
    expect(retry.length).toBeLessThan(a.requests[0]!.messages.length);
    expect(result.usage.byModel?.map((l) => [l.model, l.calls])).toEqual([
      ["two/vendor/m2", 1],
      ["one/m1", 1],
    ]);
  });

  it("keeps the turn's tool calls and results when the context overflows after them", async () => {
    const tools = new ToolRegistry();
    const { sessionSearchTool } = await import("../../agent/tools/session-search/index.js");
    tools.register(sessionSearchTool);
    a.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] },
      { error: { status: 400, message: "Please reduce the length of the messages." } },
      { text: "done after the tool" },
    );
    b.script({ text: "SUMMARY" });
    const result = await runTurn(
      { ...job(), toolsets: ["core"] },
      {
        model: client([]),
        compressionModel: "two/vendor/m2",
        tools,
        state: { searchSessions: async () => [] },
        logger: silentLogger(),
        homeDir: "/tmp",
        signal: new AbortController().signal,
        progress: () => undefined,
      },
    );
    expect(result).toMatchObject({ kind: "ok", reply: { text: "done after the tool" } });
    const retry = a.requests[2]!.messages;
    // Compressed history, then this turn's input, its tool call and the tool's result, in order.
    expect(retry.slice(-3).map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(messageText(retry.at(-3))).toBe("and now?");
    expect(retry.some((m) => messageText(m).includes("SUMMARY"))).toBe(true);
  });

  it("reports the tokens a failed turn spent before it failed", async () => {
    const tools = new ToolRegistry();
    const { sessionSearchTool } = await import("../../agent/tools/session-search/index.js");
    tools.register(sessionSearchTool);
    a.script({ toolCalls: [{ name: "session_search", arguments: { query: "x" } }] });
    a.setDefault(() => ({ error: { status: 502 } }));
    const result = await runTurn(
      { ...job(), history: [], toolsets: ["core"] },
      {
        model: client([]),
        tools,
        state: { searchSessions: async () => [] },
        logger: silentLogger(),
        homeDir: "/tmp",
        signal: new AbortController().signal,
        progress: () => undefined,
      },
    );
    expect(result.kind).toBe("failed");
    expect(result.usage?.byModel).toEqual([
      {
        model: "one/m1",
        promptTokens: a.usages[0]!.prompt_tokens,
        completionTokens: a.usages[0]!.completion_tokens,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        calls: 1,
      },
    ]);
  });

  it("says what to do when compressing did not make it fit", async () => {
    a.setDefault(() => ({
      error: { status: 400, message: "prompt is too long: 9000 tokens > 2048 maximum" },
    }));
    const result = await runTurn(job(), {
      model: client([]),
      tools: new ToolRegistry(),
      state: { searchSessions: async () => [] },
      logger: silentLogger(),
      homeDir: "/tmp",
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    expect(result).toMatchObject({ kind: "failed", retryable: false });
    if (result.kind !== "failed") return;
    expect(result.userMessage).toMatch(/longer than the context of model 'one\/m1'.*send \/new/);
  });
});

describe("providers in config.yaml", () => {
  let home: string | undefined;
  afterEach(() => {
    if (home) rmSync(home, { recursive: true, force: true });
    home = undefined;
  });
  const load = (yaml: string, env: Record<string, string> = {}) => {
    home = mkdtempSync(join(tmpdir(), "herald-providers-"));
    writeFileSync(join(home, "config.yaml"), yaml);
    writeFileSync(join(home, ".env"), "OR_KEY=sk-or-from-dotenv\n");
    return loadConfig({ env: { HERALD_HOME: home, ...env } });
  };
  const yaml = `providers:
  - name: openrouter
    base_url: https://openrouter.ai/api/v1
    api_key_env: OR_KEY
    models:
      - name: anthropic/claude-sonnet-4
        price: { input: 3, output: 15, cached: 0.3 }
  - name: local
    base_url: http://127.0.0.1:8080/v1
    models:
      - name: qwen3-8b
        context_tokens: 32768
`;

  it("reads each key from its env variable (.env included) and defaults to the first provider's first model", () => {
    const config = load(yaml);
    expect(config.providers[0]).toMatchObject({ name: "openrouter", apiKey: "sk-or-from-dotenv" });
    expect(config.model.default).toBe("openrouter/anthropic/claude-sonnet-4");
    expect(createCatalog(config).defaultModel).toBe("openrouter/anthropic/claude-sonnet-4");
  });

  it("loads the example of docs/models-and-providers.md as the page says it works", () => {
    const page = readFileSync(new URL("../../docs/models-and-providers.md", import.meta.url), "utf8");
    const example = /```yaml\n([\s\S]*?)```/.exec(page)![1]!;
    const config = load(example, { OPENROUTER_API_KEY: "sk-or-test" });
    const c = createCatalog(config);
    expect(c.defaultModel).toBe("openrouter/anthropic/claude-sonnet-4");
    expect(config.model.fallbacks.map((f) => c.resolve(f)?.provider.name)).toEqual(["openrouter", "local"]);
    expect(c.resolve(config.auxiliary.compression!)?.provider.baseUrl).toBe("http://127.0.0.1:8080/v1");
    expect(config.providers[0]?.headers).toEqual({
      "HTTP-Referer": "https://example.org",
      "X-Title": "Herald",
    });
    expect(config.access.owners).toEqual(["telegram:123456789"]);
    expect(wantsCacheMarkers(c.resolve(c.defaultModel)!)).toBe(true);
    expect(c.costOf({ model: c.defaultModel, promptTokens: 1e6, cachedTokens: 0, completionTokens: 0 })).toBe(
      3,
    );
  });

  it("keeps the env-only setup: a bare HERALD_MODEL on OPENAI_BASE_URL", () => {
    const config = load("", { OPENAI_BASE_URL: "http://127.0.0.1:1234/v1", HERALD_MODEL: "llama" });
    const c = createCatalog(config);
    expect(c.defaultModel).toBe("llama");
    expect(c.resolve("llama")?.provider.baseUrl).toBe("http://127.0.0.1:1234/v1");
  });

  it("names the key and the fix for a missing key, a duplicate name and a reference to no provider", () => {
    const error = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        if (err instanceof ConfigError) return err;
        throw err;
      }
      throw new Error("expected a ConfigError");
    };
    const missing = error(() => load(yaml.replace("OR_KEY", "MISSING_KEY")));
    expect(missing.key).toBe("MISSING_KEY");
    expect(missing.message).toContain("Fix: add MISSING_KEY=<key> to HERALD_HOME/.env");
    const twice = error(() => load(yaml.replace("name: local", "name: openrouter")));
    expect(twice.message).toContain("two entries named 'openrouter'");
    const typo = error(() => createCatalog(load(`${yaml}model:\n  fallbacks: [lokal/qwen3-8b]\n`)));
    expect(typo.key).toBe("model.fallbacks.0");
    expect(typo.message).toContain("no provider is named 'lokal' (providers: openrouter, local)");
    const noModels = error(() =>
      load(
        yaml.replace(/ {4}models:\n {6}- name: qwen3-8b\n {8}context_tokens: 32768\n/, "    models: []\n"),
      ),
    );
    expect(noModels.message).toContain("providers.1.models");
    const noRegion = error(() =>
      load("providers:\n  - name: aws\n    api: bedrock\n    models: [{ name: m }]\n"),
    );
    expect(noRegion.key).toBe("providers.0.base_url");
    expect(noRegion.message).toContain("AWS_REGION");
    const aws = load("providers:\n  - name: aws\n    api: bedrock\n    models: [{ name: m }]\n", {
      AWS_REGION: "eu-west-1",
    });
    expect(aws.providers[0]?.baseUrl).toBe("https://bedrock-runtime.eu-west-1.amazonaws.com");
    const noUrl = error(() => load(yaml.replace("    base_url: http://127.0.0.1:8080/v1\n", "")));
    expect(noUrl.key).toBe("providers.1.base_url");
  });

  it("reads each provider's protocol from api, else from its base URL; Anthropic needs no base_url", () => {
    const config = load(`providers:
  - name: claude
    api: anthropic
    api_key_env: OR_KEY
    models:
      - name: claude-sonnet-4-5
        price: { input: 3, output: 15, cached: 0.3, cache_write: 3.75 }
  - name: direct
    base_url: https://api.anthropic.com
    models: [{ name: claude-haiku }]
  - name: oa
    api: openai-responses
    base_url: https://api.openai.com/v1
    models: [{ name: o4-mini }]
  - name: router
    base_url: https://openrouter.ai/api/v1
    models: [{ name: x }]
`);
    expect(config.providers.map((p) => [p.name, apiOf(p), p.baseUrl])).toEqual([
      ["claude", "anthropic", "https://api.anthropic.com"],
      ["direct", "anthropic", "https://api.anthropic.com"],
      ["oa", "openai-responses", "https://api.openai.com/v1"],
      ["router", "openai-chat", "https://openrouter.ai/api/v1"],
    ]);
    // The cost prices cache writes: 1M written at 3.75 plus 1M read at 0.3 plus 1M plain input at 3.
    const catalog = createCatalog(config);
    const cost = catalog.costOf({
      model: "claude/claude-sonnet-4-5",
      promptTokens: 3_000_000,
      cachedTokens: 1_000_000,
      cacheWriteTokens: 1_000_000,
      completionTokens: 0,
    });
    expect(cost).toBeCloseTo(3 + 0.3 + 3.75);
  });
});
