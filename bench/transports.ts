/**
 * The model transports: CPU per model call of each wire protocol's transport against an instant fake
 * of its vendor (the fakes run in a worker thread; only this thread's CPU is counted), as a ratio to
 * the chat-completions transport; and the request bytes and cached share of a 20-turn Anthropic
 * session through the gateway with and without cache breakpoints.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { createModelClient } from "../agent/model-client.js";
import { createAnthropicTransport } from "../agent/providers/anthropic.js";
import { createBedrockTransport } from "../agent/providers/bedrock.js";
import { createGeminiTransport } from "../agent/providers/gemini.js";
import type { ModelMessage, ModelTool, ModelTransport, ResolvedModel } from "../agent/providers/index.js";
import { createOpenAIChatTransport } from "../agent/providers/openai-chat.js";
import { createOpenAIResponsesTransport } from "../agent/providers/openai-responses.js";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { silentLogger } from "../core/logger.js";
import { createNodeFetch } from "../core/node-fetch.js";
import { startFakeAnthropic } from "../tests/fakes/anthropic/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { cpuSeconds, machineLine, round } from "./lib.js";

export interface TransportsBenchOptions {
  /** Calls per transport per round. */
  calls: number;
  rounds: number;
  /** Turns of the session whose request bytes are counted. */
  sessionTurns: number;
}

export interface TransportCpu {
  api: string;
  /** Median over rounds of CPU microseconds per call on the calling thread. */
  cpuUsPerCall: number;
  ratio: number;
}

export interface CacheFigures {
  breakpoints: boolean;
  requests: number;
  requestBytes: number;
  /** Prompt tokens the fake's cache served / all prompt tokens. */
  cachedShare: number;
  /** Prompt tokens written to the cache / all prompt tokens. */
  writtenShare: number;
}

export interface TransportsBenchResult {
  cpu: TransportCpu[];
  cache: CacheFigures[];
  requestMessages: number;
  requestTools: number;
}

/** A request of a usual size: a 4 KB system prompt, 20 tool schemas, 10 messages of history. */
function usualRequest(): { messages: ModelMessage[]; tools: ModelTool[] } {
  const tools: ModelTool[] = Array.from({ length: 20 }, (_, i) => ({
    type: "function",
    function: {
      name: `tool_${i}`,
      description: `Tool number ${i}: does one thing well and says what it did. `.repeat(3),
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "what to look for" }, limit: { type: "number" } },
        required: ["query"],
      },
    },
  }));
  const messages: ModelMessage[] = [
    { role: "system", content: "You are Herald, a helpful assistant. ".repeat(110) },
  ];
  for (let i = 0; i < 5; i++) {
    messages.push({
      role: "user",
      content: `Question ${i}: what should I do next about the project? `.repeat(3),
    });
    messages.push({
      role: "assistant",
      content: `Answer ${i}: a paragraph of a usual length for a chat reply. `.repeat(5),
    });
  }
  messages.push({ role: "user", content: "And now?" });
  return { messages, tools };
}

async function cpuPerCall(transport: ModelTransport, target: ResolvedModel, calls: number): Promise<number> {
  const request = { ...usualRequest(), onTextDelta: () => undefined };
  const before = cpuSeconds(process.pid, process.pid);
  for (let i = 0; i < calls; i++) await transport.stream(target, request);
  return ((cpuSeconds(process.pid, process.pid) - before) / calls) * 1e6;
}

/** A model client seen as a transport: its `streamChat` is the call measured. */
function asTransport(client: ReturnType<typeof createModelClient>): ModelTransport {
  return {
    api: "openai-chat",
    stream: async (_target, request) =>
      client.streamChat({
        messages: [...request.messages],
        tools: request.tools as ModelTool[],
        onTextDelta: request.onTextDelta,
      }),
    classify: () => {
      throw new Error("not used");
    },
  };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;

export async function benchTransports(options: TransportsBenchOptions): Promise<TransportsBenchResult> {
  const worker = new Worker(new URL("./transport-fakes.js", import.meta.url));
  const urls = await new Promise<{
    chat: string;
    anthropic: string;
    responses: string;
    gemini: string;
    bedrock: string;
  }>((resolve) => worker.once("message", resolve));
  // Bedrock signs with the AWS credentials of the environment (the fake checks the key id).
  process.env["AWS_ACCESS_KEY_ID"] = "AKIDBENCH";
  process.env["AWS_SECRET_ACCESS_KEY"] = "bench-secret";
  // The fetch the model client gives its transports (Node's http keep-alive agents).
  const transport = { timeoutMs: 30_000, fetch: createNodeFetch() };
  const subjects: { api: string; transport: ModelTransport; target: ResolvedModel }[] = [
    {
      api: "openai-chat",
      transport: createOpenAIChatTransport(transport),
      target: {
        ref: "c/m",
        model: "m",
        provider: { name: "c", baseUrl: urls.chat, apiKey: "bench", models: [] },
      },
    },
    {
      api: "openai-responses",
      transport: createOpenAIResponsesTransport(transport),
      target: {
        ref: "r/o",
        model: "o",
        provider: {
          name: "r",
          api: "openai-responses",
          baseUrl: urls.responses,
          apiKey: "bench",
          models: [],
        },
      },
    },
    {
      api: "gemini",
      transport: createGeminiTransport(transport),
      target: {
        ref: "g/gemini",
        model: "gemini",
        provider: { name: "g", api: "gemini", baseUrl: urls.gemini, apiKey: "bench", models: [] },
      },
    },
    {
      api: "anthropic",
      transport: createAnthropicTransport(transport),
      target: {
        ref: "a/claude",
        model: "claude",
        provider: { name: "a", api: "anthropic", baseUrl: urls.anthropic, apiKey: "bench", models: [] },
      },
    },
    {
      api: "bedrock",
      transport: createBedrockTransport(transport),
      target: {
        ref: "b/nova",
        model: "amazon.nova-pro-v1:0",
        provider: { name: "b", api: "bedrock", baseUrl: urls.bedrock, models: [] },
      },
    },
  ];
  // The whole model client (retries, fallbacks) on the chat transport, this build's and, with
  // HERALD_BENCH_BEFORE_CLIENT=<another build's dist/agent/model-client.js>, that build's.
  const clients: [string, string | undefined][] = [["model client (openai-chat)", undefined]];
  const before = process.env["HERALD_BENCH_BEFORE_CLIENT"];
  if (before) clients.push(["model client (openai-chat), before", before]);
  for (const [api, path] of clients) {
    const make = path
      ? ((await import(path)) as { createModelClient: typeof createModelClient }).createModelClient
      : createModelClient;
    const client = make({
      baseUrl: urls.chat,
      apiKey: "bench",
      name: "m",
      fallbacks: [],
      contextTokens: 128_000,
      maxIterations: 10,
      timeoutMs: 30_000,
      maxRetries: 0,
      vision: false,
    });
    subjects.push({ api, transport: asTransport(client), target: subjects[0]!.target });
  }
  const samples = new Map<string, number[]>(subjects.map((s) => [s.api, []]));
  try {
    // Warm every subject up first, then rotate their order each round: what runs later in a process
    // runs on a warmer JIT and heap, which would otherwise favour the last subject.
    for (const s of subjects) await cpuPerCall(s.transport, s.target, 200);
    for (let round = 0; round < options.rounds; round++) {
      const order = subjects.map((_, i) => subjects[(i + round) % subjects.length]!);
      for (const s of order) samples.get(s.api)!.push(await cpuPerCall(s.transport, s.target, options.calls));
    }
  } finally {
    worker.postMessage("close");
    await new Promise((resolve) => worker.once("exit", resolve));
  }
  const chat = median(samples.get("openai-chat")!);
  const cpu = subjects.map((s) => {
    const us = median(samples.get(s.api)!);
    return { api: s.api, cpuUsPerCall: round(us, 0), ratio: round(us / chat, 2) };
  });
  const cache = [
    await sessionBytes(options.sessionTurns, true),
    await sessionBytes(options.sessionTurns, false),
  ];
  const usual = usualRequest();
  return { cpu, cache, requestMessages: usual.messages.length, requestTools: usual.tools.length };
}

/** A session of `turns` turns on Anthropic through the gateway (every third with a tool call). */
async function sessionBytes(turns: number, breakpoints: boolean): Promise<CacheFigures> {
  const claude = await startFakeAnthropic({ apiKey: "bench" });
  const unused = await startFakeLlm();
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-transports-"));
  const { writeFileSync } = await import("node:fs");
  writeFileSync(
    join(homeDir, "config.yaml"),
    `providers:\n  - name: claude\n    api: anthropic\n    base_url: ${claude.url}\n    api_key_env: BENCH_ANTHROPIC_KEY\n    models:\n      - name: claude-bench\n        cache_control: ${breakpoints}\nmodel:\n  default: claude/claude-bench\n`,
  );
  const config = loadConfig({
    env: {
      HERALD_HOME: homeDir,
      OPENAI_BASE_URL: unused.url,
      BENCH_ANTHROPIC_KEY: "bench",
      API_SERVER_PORT: "0",
      HERALD_LOG_LEVEL: "silent",
      HERALD_LEARNING_ENABLED: "false",
    },
  });
  const gateway = await startGateway(config, { logger: silentLogger() });
  try {
    const url = `${gateway.http?.url}/v1/chat/completions`;
    let sessionId: string | undefined;
    for (let i = 0; i < turns; i++) {
      if (i % 3 === 2) {
        claude.script(
          { toolCalls: [{ name: "session_search", arguments: { query: `topic ${i}` } }] },
          { text: `Nothing earlier about topic ${i}; here is what I know now.` },
        );
      } else {
        claude.script({ text: `Answer ${i}: a paragraph of a usual length for a chat reply. `.repeat(4) });
      }
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(sessionId ? { "x-herald-session-id": sessionId } : {}),
        },
        body: JSON.stringify({
          model: "herald",
          messages: [{ role: "user", content: `Question ${i}: what next?` }],
        }),
      });
      if (res.status !== 200) throw new Error(`turn ${i} answered ${res.status}: ${await res.text()}`);
      sessionId ??= res.headers.get("x-herald-session-id") ?? undefined;
      await res.text();
    }
    if (claude.rejected.length) throw new Error(`the fake refused a request: ${claude.rejected[0]}`);
    const prompt = claude.usages.reduce(
      (n, u) => n + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
      0,
    );
    const read = claude.usages.reduce((n, u) => n + u.cache_read_input_tokens, 0);
    const written = claude.usages.reduce((n, u) => n + u.cache_creation_input_tokens, 0);
    return {
      breakpoints,
      requests: claude.bodies.length,
      requestBytes: claude.bodies.reduce((n, b) => n + Buffer.byteLength(b), 0),
      cachedShare: round((read / prompt) * 100, 1),
      writtenShare: round((written / prompt) * 100, 1),
    };
  } finally {
    await gateway.stop();
    await claude.close();
    await unused.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

export function transportsMarkdown(
  r: TransportsBenchResult,
  o: TransportsBenchOptions,
  command: string,
): string {
  const kb = (n: number) => `${round(n / 1024, 1)} KB`;
  const cpuRows = r.cpu
    .map(
      (c) =>
        `| ${c.api} | ${c.cpuUsPerCall} µs | ${c.ratio}× | ${c.api.startsWith("model client") ? "" : "≤ 1.5×"} |`,
    )
    .join("\n");
  const cacheRows = r.cache
    .map(
      (c) =>
        `| ${c.breakpoints ? "on (default)" : "off (`cache_control: false`)"} | ${c.requests} | ${kb(c.requestBytes)} | ${c.cachedShare} % | ${c.writtenShare} % |`,
    )
    .join("\n");
  return `## Model transports: CPU per call and prompt caching

Command: \`${command}\` — ${machineLine()}. Each transport streams ${o.calls} calls in a row per round (after 200
warm-up calls each; the order of the transports rotates each round) to an instant fake of its vendor's API running in a worker thread; the CPU counted is the
calling thread's alone (request body, HTTP, reading the events). The model client rows are the whole
client (retries, fallbacks) over the chat transport; "before" is the client before the transports were
split out (\`HERALD_BENCH_BEFORE_CLIENT\`). Median of ${o.rounds} rounds; the kernel counts CPU in 10 ms ticks,
so a figure moves in steps of ${round(10_000 / o.calls, 0)} µs. The request:
a 4 KB system prompt, ${r.requestTools} tool schemas, ${r.requestMessages} messages; the answer: 450
characters in 6 pieces.

| transport | CPU per call | vs openai-chat | target |
|---|---|---|---|
${cpuRows}

Prompt caching on Anthropic: one API session of ${o.sessionTurns} turns (every third with a tool call)
through the in-process gateway, default toolsets, against the fake Anthropic API, whose cache keys on
the prompt up to each \`cache_control\` breakpoint (looked up 20 blocks back, as Anthropic's is) and
counts tokens as characters / 4.

| breakpoints | requests | request bytes, all | prompt read from the cache | prompt written to the cache |
|---|---|---|---|---|
${cacheRows}

The markers cost a few bytes per request; without them Anthropic caches nothing.

The chat, Responses and Anthropic transports send through their SDK and read the events themselves
(eventsource-parser) on the model client's Node http fetch; Gemini's sends and reads the same way
(\`@google/genai\`'s own \`generateContentStream\` cost 2.4× the chat transport on the same fetch, 3.1× on
its default one). Bedrock's does too: its body built in the transport, signed by the SDK's SigV4
signer (\`@smithy/signature-v4\`, the credentials from the SDK client's standard chain) and its binary
event stream decoded by the SDK's codec (\`@smithy/core\`), on the same fetch;
through \`@aws-sdk/client-bedrock-runtime\`'s \`client.send\` (an HTTP/2 session per request, its
middleware, schema serializers and event-stream deserializers) it cost 4.7× the chat transport.
Between runs the ratios move by about ±0.15×; the host was loaded for this run (the microseconds are
high for all alike: read the ratios).`;
}
