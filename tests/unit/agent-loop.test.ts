import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { telegramPlatform } from "../../adapters/telegram/module.js";
import { compressIfNeeded, planCompression, SUMMARY_PREFIX } from "../../agent/compression.js";
import { runTurn, type TurnDeps } from "../../agent/loop.js";
import { createModelClient, type ModelClientConfig } from "../../agent/model-client.js";
import { buildSystemPrompt } from "../../agent/prompt.js";
import { defineTool, ToolRegistry, toOpenAITools } from "../../agent/tool-registry.js";
import { sessionSearchTool } from "../../agent/tools/session-search/index.js";
import type { StateClient } from "../../agent/types.js";
import { createTurnHandler } from "../../agent/worker.js";
import { isAbortError } from "../../core/errors.js";
import { silentLogger } from "../../core/logger.js";
import type { HistoryItem, TurnJob, TurnProgress, TurnRecord, TurnResult } from "../../core/turn.js";
import { CLIENT_PENDING } from "../../core/turn-steps.js";
import type { ChatMessage } from "../../core/types.js";
import { MemorySessionStore } from "../../sessions/memory-session-store.js";
import { type FakeLlm, type FakeLlmMessage, messageText, startFakeLlm } from "../fakes/llm/index.js";

let llm: FakeLlm;
let events: TurnProgress[];

beforeEach(async () => {
  llm = await startFakeLlm();
  events = [];
});
afterEach(async () => {
  await llm.close();
});

function modelConfig(overrides: Partial<ModelClientConfig> = {}): ModelClientConfig {
  return {
    baseUrl: llm.url,
    apiKey: "sk-test",
    name: "main",
    fallbacks: [],
    contextTokens: 128_000,
    maxIterations: 90,
    timeoutMs: 20_000,
    maxRetries: 3,
    vision: false,
    retryBaseDelayMs: 2,
    retryMaxDelayMs: 10,
    ...overrides,
  };
}

/** Messages as a session's history, numbered from 1 as the store numbers them. */
function items(messages: readonly ChatMessage[]): HistoryItem[] {
  return messages.map((message, i) => ({ seq: i + 1, message }));
}

function makeJob(overrides: Partial<TurnJob> = {}): TurnJob {
  return {
    kind: "turn",
    turnId: "turn-1",
    origin: {
      sessionId: "s-current",
      sessionKey: "telegram:dm:u1",
      chat: { platform: "telegram", chatId: "u1" },
      chatType: "dm",
      userId: "u1",
    },
    history: [],
    input: { text: "hi" },
    systemPrompt: "You are a test assistant.",
    toolsets: ["core", "test"],
    createdAt: 0,
    ...overrides,
  };
}

const noState: StateClient = { searchSessions: async () => [] };

function makeDeps(overrides: Partial<TurnDeps> & { config?: Partial<ModelClientConfig> } = {}): TurnDeps {
  const { config, ...rest } = overrides;
  return {
    model: createModelClient(modelConfig(config)),
    tools: new ToolRegistry().register(sessionSearchTool, lookupTool),
    state: noState,
    logger: silentLogger(),
    homeDir: "/tmp/herald-test",
    signal: new AbortController().signal,
    progress: (e) => events.push(e),
    ...rest,
  };
}

const lookupCalls: string[] = [];
const lookupTool = defineTool({
  name: "lookup",
  description: "Looks a key up.",
  parameters: z.object({ key: z.string(), count: z.number().int().optional() }),
  toolset: "test",
  async execute({ key }) {
    lookupCalls.push(key);
    return `value of ${key} is 42`;
  },
});

const lastMessage = (req: { messages: FakeLlmMessage[] }) => req.messages[req.messages.length - 1];
const ok = (r: TurnResult) => {
  if (r.kind !== "ok") throw new Error(`turn failed: ${r.userMessage}`);
  return r;
};

describe("runTurn", () => {
  it("sends no text as progress when nobody shows the reply as it is written", async () => {
    const result = ok(await runTurn(makeJob({ input: { text: "quiet" } }), makeDeps()));
    expect(result.reply.text).toBe("echo: quiet");
    expect(events.filter((e) => e.type === "text-delta")).toEqual([]);
  });

  it("answers plainly, streaming the text as progress", async () => {
    const result = ok(await runTurn(makeJob({ input: { text: "hello" }, streamText: true }), makeDeps()));
    expect(result.reply.text).toBe("echo: hello");
    expect(result.messages).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "echo: hello" },
    ]);
    const deltas = events
      .filter((e) => e.type === "text-delta")
      .map((e) => (e.type === "text-delta" ? e.text : ""));
    expect(deltas.join("")).toBe("echo: hello");
    expect(result.usage.modelCalls).toBe(1);
    expect(result.model).toBe("main");
    expect(llm.requests[0]?.messages[0]).toEqual({ role: "system", content: "You are a test assistant." });
    expect(llm.requests[0]?.tools?.map((t) => t.function.name)).toEqual(["session_search", "lookup"]);
  });

  it("runs a tool and gives its result back to the model", async () => {
    llm.script({ toolCalls: [{ name: "lookup", arguments: { key: "answer" }, id: "c1" }] }, (req) => ({
      text: `The tool said: ${messageText(lastMessage(req))}`,
    }));
    const result = ok(await runTurn(makeJob(), makeDeps()));
    expect(result.reply.text).toBe("The tool said: value of answer is 42");
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(result.messages[2]).toEqual({
      role: "tool",
      tool_call_id: "c1",
      content: "value of answer is 42",
    });
    expect(llm.requests[1]?.messages.at(-2)?.tool_calls?.[0]?.id).toBe("c1");
    const start = events.find((e) => e.type === "tool-start");
    expect(start).toMatchObject({ name: "lookup", callId: "c1", summary: 'key: "answer"' });
    expect(events.find((e) => e.type === "tool-end")).toMatchObject({ name: "lookup", ok: true });
    expect(result.usage).toMatchObject({ modelCalls: 2, toolCalls: 1 });
  });

  it("runs the tool calls of one response in parallel", async () => {
    let started = 0;
    let openBarrier!: () => void;
    const barrier = new Promise<void>((resolve) => {
      openBarrier = resolve;
    });
    const barrierTool = defineTool({
      name: "barrier",
      description: "Waits until every barrier call has started.",
      parameters: z.object({ n: z.number() }),
      toolset: "test",
      async execute({ n }, ctx) {
        started++;
        if (started === 2) openBarrier();
        // Sequential calls would never open the barrier; the guard turns a hang into a clear failure.
        let guard: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          barrier.then(() => "overlapped"),
          new Promise<string>((resolve) => {
            guard = setTimeout(() => resolve("alone"), 10_000);
            ctx.signal.addEventListener("abort", () => resolve("aborted"));
          }),
        ]);
        clearTimeout(guard);
        return `${n}: ${outcome}`;
      },
    });
    llm.script(
      {
        toolCalls: [
          { name: "barrier", arguments: { n: 1 } },
          { name: "barrier", arguments: { n: 2 } },
        ],
      },
      { text: "done" },
    );
    const result = ok(
      await runTurn(makeJob(), makeDeps({ tools: new ToolRegistry().register(barrierTool) })),
    );
    const toolMessages = result.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(toolMessages).toEqual(["1: overlapped", "2: overlapped"]);
  });

  it("sends invalid tool arguments back to the model as a tool error", async () => {
    lookupCalls.length = 0;
    llm.script({ toolCalls: [{ name: "lookup", arguments: { key: 7 } }] }, (req) => ({
      text: messageText(lastMessage(req)),
    }));
    const result = ok(await runTurn(makeJob(), makeDeps()));
    expect(lookupCalls).toEqual([]);
    expect(result.reply.text).toMatch(/^error: invalid arguments for lookup/);
    expect(result.reply.text).toContain("key");
    expect(events.find((e) => e.type === "tool-end")).toMatchObject({ ok: false });
  });

  it("stops a model that always calls tools at the step cap with a reply", async () => {
    llm.setDefault(() => ({ toolCalls: [{ name: "lookup", arguments: { key: "again" } }] }));
    const result = ok(await runTurn(makeJob({ maxIterations: 3 }), makeDeps()));
    expect(llm.requests).toHaveLength(3);
    expect(result.reply.text).toContain("I stopped after 3 steps");
    expect(result.messages.at(-1)).toEqual({ role: "assistant", content: result.reply.text });
    expect(result.messages.filter((m) => m.role === "tool")).toHaveLength(3);
  });

  it("waits out a 429 with Retry-After and then succeeds", async () => {
    llm.script({ error: { status: 429, message: "slow down", retryAfterSeconds: 0.05 } }, { text: "ok now" });
    const result = ok(await runTurn(makeJob(), makeDeps()));
    expect(result.reply.text).toBe("ok now");
    expect(llm.requests).toHaveLength(2);
  });

  it("falls back to the next model after the main one keeps failing", async () => {
    llm.script(
      { model: "main", error: { status: 500 } },
      { model: "main", error: { status: 500 } },
      { model: "main", error: { status: 500 } },
      { model: "backup", text: "from backup" },
    );
    const deps = makeDeps({ config: { maxRetries: 2, fallbacks: ["backup"] } });
    const result = ok(await runTurn(makeJob(), deps));
    expect(result.reply.text).toBe("from backup");
    expect(result.model).toBe("backup");
    expect(llm.requests.map((r) => r.model)).toEqual(["main", "main", "main", "backup"]);
  });

  it("fails with a clear message after the retries of every model", async () => {
    llm.setDefault(() => ({ error: { status: 503 } }));
    const result = await runTurn(makeJob({ input: { text: "are you there" } }), makeDeps());
    expect(result).toMatchObject({ kind: "failed", retryable: true });
    if (result.kind !== "failed") return;
    expect(result.userMessage).toBe(
      "The model endpoint is not answering (503) after 4 tries; try again in a minute.",
    );
    expect(result.messages).toEqual([{ role: "user", content: "are you there" }]);
    expect(llm.requests).toHaveLength(4);
  });

  it("fails at once on 401, without retries or fallbacks", async () => {
    llm.setDefault(() => ({ error: { status: 401, message: "Incorrect API key provided." } }));
    const result = await runTurn(makeJob(), makeDeps({ config: { fallbacks: ["backup"] } }));
    expect(result).toMatchObject({
      kind: "failed",
      retryable: false,
      userMessage: "The model endpoint answered 401: check OPENAI_API_KEY.",
    });
    expect(llm.requests).toHaveLength(1);
  });

  it("retries a dropped connection and a model that does not answer in time", async () => {
    llm.script({ disconnect: true }, { text: "after the drop" });
    expect(ok(await runTurn(makeJob(), makeDeps())).reply.text).toBe("after the drop");
    expect(llm.requests).toHaveLength(2);

    llm.setDefault(() => ({ text: "too late", delayMs: 60_000 }));
    const result = await runTurn(makeJob(), makeDeps({ config: { timeoutMs: 100, maxRetries: 1 } }));
    expect(result).toMatchObject({ kind: "failed", retryable: true });
    expect(result.kind === "failed" && result.userMessage).toBe(
      "The model endpoint did not answer within 0.1 s after 2 tries; try again in a minute.",
    );
    expect(llm.requests).toHaveLength(4);
  });

  it("reads an answer whose bytes split anywhere: inside a character, between CR and LF, around comments", async () => {
    const event = (body: object, end = "\r\n\r\n") =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "main", ...body })}${end}`;
    const delta = (d: object, finish: string | null = null) =>
      event({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
    const arrow = Buffer.from("→"); // three bytes on the wire
    const second = delta({ content: "Grüße → Welt" });
    const cut = second.indexOf("→");
    const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
    llm.script({
      sse: [
        ": keep-alive\r\n\r\n",
        `${delta({ role: "assistant", content: "" })}\r`,
        `\n${second.slice(0, cut)}`,
        arrow.subarray(0, 1),
        Buffer.concat([arrow.subarray(1), Buffer.from(second.slice(cut + 1))]),
        ": still here\n\n",
        delta({}, "stop"),
        event({ choices: [], usage }, "\n\n"),
        "data: [DONE]\n\n",
      ],
    });
    const deltas: string[] = [];
    const deps = makeDeps({ progress: (e) => e.type === "text-delta" && deltas.push(e.text) });
    const result = ok(await runTurn(makeJob({ streamText: true }), deps));
    expect(result.reply.text).toBe("Grüße → Welt");
    expect(deltas.join("")).toBe("Grüße → Welt");
    expect(result.usage).toMatchObject({ promptTokens: 12, completionTokens: 5, modelCalls: 1 });
  });

  it("retries an answer the model server broke off with an error event before any text", async () => {
    llm.script(
      { sse: ['data: {"error":{"message":"The server is overloaded.","type":"server_error"}}\n\n'] },
      { text: "second try" },
    );
    expect(ok(await runTurn(makeJob(), makeDeps())).reply.text).toBe("second try");
    expect(llm.requests).toHaveLength(2);

    llm.setDefault(() => ({ sse: ['data: {"error":{"message":"The server is overloaded."}}\n\n'] }));
    const failed = await runTurn(makeJob(), makeDeps({ config: { maxRetries: 1 } }));
    expect(failed).toMatchObject({ kind: "failed", retryable: true });
    expect(failed.kind === "failed" && failed.userMessage).toContain("The server is overloaded.");
  });

  it("times out a stream that stops sending half-way, without a retry (its text was already shown)", async () => {
    llm.script({ text: "a long answer that stalls", chunkDelayMs: 60_000 });
    const started = performance.now();
    const result = await runTurn(makeJob(), makeDeps({ config: { timeoutMs: 200, maxRetries: 2 } }));
    expect(result).toMatchObject({ kind: "failed" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(llm.requests).toHaveLength(1);
  });

  it("rejects promptly when aborted mid-stream, and the model server sees the connection close", async () => {
    llm.script({ text: "a long answer that takes a minute to stream", chunkDelayMs: 60_000 });
    const controller = new AbortController();
    const deps = makeDeps({
      signal: controller.signal,
      progress: (e) => {
        if (e.type === "text-delta") controller.abort();
      },
    });
    const error = await runTurn(makeJob({ streamText: true }), deps).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    await llm.waitForClosedEarly(1);
    expect(llm.requests).toHaveLength(1);
  });

  it("notes attachments in the text without vision, and sends images as data URLs with it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "herald-att-"));
    try {
      const image = join(dir, "cat.png");
      await writeFile(image, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      const input = {
        text: "look",
        attachments: [
          { kind: "image" as const, path: image, fileName: "cat.png", mimeType: "image/png" },
          {
            kind: "document" as const,
            path: join(dir, "r.pdf"),
            fileName: "r.pdf",
            mimeType: "application/pdf",
          },
        ],
      };
      const plain = ok(await runTurn(makeJob({ input }), makeDeps()));
      expect(plain.messages[0]?.content).toBe(
        `look\n[attached image: cat.png, image/png, ${image}]\n[attached file: r.pdf, application/pdf, ${join(dir, "r.pdf")}]`,
      );
      await runTurn(makeJob({ input }), makeDeps({ config: { vision: true } }));
      const parts = lastMessage(llm.requests[1]!)?.content;
      expect(Array.isArray(parts) && parts.map((p) => p.type)).toEqual(["text", "image_url"]);
      expect(Array.isArray(parts) && parts[1]?.image_url?.url).toBe("data:image/png;base64,iVBORw==");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is what the queue handler runs, with the queue's signal and progress", async () => {
    const handler = createTurnHandler({
      model: createModelClient(modelConfig()),
      tools: new ToolRegistry(),
      state: noState,
      logger: silentLogger(),
      homeDir: "/tmp",
    });
    const seen: TurnProgress[] = [];
    const result = await handler(makeJob({ input: { text: "queued" }, streamText: true }), {
      signal: new AbortController().signal,
      progress: (e) => seen.push(e),
    });
    expect(ok(result).reply.text).toBe("echo: queued");
    expect(seen.some((e) => e.type === "text-delta")).toBe(true);
  });
});

describe("compression", () => {
  const big = (tag: string, chars: number) => `${tag} ${"x".repeat(chars)}`;
  // contextTokens 1000: compress above 750 tokens; tail budget 300 tokens (~1,200 chars).
  const history: ChatMessage[] = [
    { role: "user", content: "first question" },
    { role: "assistant", content: "first answer" },
    { role: "user", content: big("middle-1", 1200) },
    { role: "assistant", content: big("middle-2", 1200) },
    { role: "user", content: "check two things" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "t1", type: "function", function: { name: "lookup", arguments: '{"key":"a"}' } },
        { id: "t2", type: "function", function: { name: "lookup", arguments: '{"key":"b"}' } },
      ],
    },
    // Walking back from the end, the tail budget runs out between these two results.
    { role: "tool", tool_call_id: "t1", content: big("result-a", 600) },
    { role: "tool", tool_call_id: "t2", content: big("result-b", 600) },
    { role: "assistant", content: "both checked" },
  ];

  it("keeps head and tail, moving the cut so no tool result loses its call", () => {
    const plan = planCompression(items(history), 1000);
    expect(plan?.head.map((h) => h.message.content)).toEqual(["first question", "first answer"]);
    expect(plan?.tail.map((h) => h.message)).toEqual([{ role: "assistant", content: "both checked" }]);
    expect(plan?.middle.map((h) => h.message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "tool",
    ]);
  });

  it("summarises the middle with one model call and the turn continues on the result", async () => {
    llm.script((req) => ({
      text: req.tools
        ? "unexpected tools in the summary call"
        : "SUMMARY: the user asked about middle things",
    }));
    const result = ok(
      await runTurn(
        makeJob({ history: items(history), input: { text: "and now?" } }),
        makeDeps({ config: { contextTokens: 1000 } }),
      ),
    );
    expect(llm.requests).toHaveLength(2);
    const summaryRequest = messageText(lastMessage(llm.requests[0]!));
    expect(summaryRequest).toContain("Summarise this conversation for continuing it");
    expect(summaryRequest).toContain("middle-1");
    expect(summaryRequest).toContain("assistant called lookup");

    const sent = llm.requests[1]!.messages;
    const starts = [
      "You are a test",
      "first question",
      "first answer",
      SUMMARY_PREFIX,
      "both checked",
      "and now?",
    ];
    expect(sent).toHaveLength(starts.length);
    for (const [i, m] of sent.entries()) expect(messageText(m).startsWith(starts[i]!)).toBe(true);
    expect(messageText(sent[3])).toContain("SUMMARY: the user asked about middle things");
    expect(result.compaction).toEqual({
      uptoSeq: 8,
      summary: "SUMMARY: the user asked about middle things",
    });
    expect(result.usage.modelCalls).toBe(2);
    expect(result.reply.text).toBe("echo: and now?");
  });

  it("never sends an orphaned tool result or an unanswered tool call", async () => {
    // A larger window keeps the tool group in the tail: it must stay whole with its results.
    llm.script({ text: "summary" });
    const long: ChatMessage[] = [...history.slice(0, 4), ...history.slice(0, 4), ...history.slice(4)];
    const out = await compressIfNeeded({
      systemPrompt: "",
      history: items(long),
      input: { role: "user", content: "next" },
      client: createModelClient(modelConfig({ contextTokens: 1800 })),
      signal: new AbortController().signal,
      logger: silentLogger(),
    });
    expect(out.compaction).toBeDefined();
    const seen = new Set<string>();
    for (const [i, m] of out.history.entries()) {
      if (m.role === "assistant" && m.tool_calls) {
        const results = out.history.slice(i + 1, i + 1 + m.tool_calls.length);
        expect(results.map((r) => (r.role === "tool" ? r.tool_call_id : r.role))).toEqual(
          m.tool_calls.map((c) => c.id),
        );
        for (const c of m.tool_calls) seen.add(c.id);
      }
      if (m.role === "tool") expect(seen.has(m.tool_call_id)).toBe(true);
    }
    expect(out.history.some((m) => m.role === "tool")).toBe(true);
  });
});

describe("history repair", () => {
  it("drops tool calls without results and results without calls before sending", async () => {
    const history: ChatMessage[] = [
      { role: "tool", tool_call_id: "lost", content: "orphan" },
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: "checking",
        tool_calls: [{ id: "never", type: "function", function: { name: "lookup", arguments: "{}" } }],
      },
      { role: "user", content: "again" },
    ];
    await runTurn(makeJob({ history: items(history) }), makeDeps());
    const sent = llm.requests[0]!.messages;
    expect(sent.map((m) => [m.role, messageText(m)])).toEqual([
      ["system", "You are a test assistant."],
      ["user", "q"],
      ["assistant", "checking"],
      ["user", "again"],
      ["user", "hi"],
    ]);
    expect(sent[2]?.tool_calls).toBeUndefined();
  });
});

describe("session_search", () => {
  it("finds only the caller's own earlier sessions on the same platform", async () => {
    const store = new MemorySessionStore();
    const policy = { mode: "none" as const, idleMinutes: 1440, atHour: 4 };
    const dm = (platform: string, user: string) => ({
      chat: { platform, chatId: user },
      chatType: "dm" as const,
      userId: user,
    });
    const earlier = store.open(dm("telegram", "u1"), policy).session;
    store.append(earlier.id, [{ role: "user", content: "the deploy key lives in the vault" }]);
    store.reset(earlier.key, "manual");
    const current = store.open(dm("telegram", "u1"), policy).session;
    store.append(current.id, [{ role: "user", content: "deploy from the current session" }]);
    const other = store.open(dm("telegram", "u2"), policy).session;
    store.append(other.id, [{ role: "user", content: "bob's deploy secret" }]);
    const elsewhere = store.open(dm("discord", "u1"), policy).session;
    store.append(elsewhere.id, [{ role: "user", content: "deploy talk on discord" }]);
    const state: StateClient = { searchSessions: async (q, o) => store.search(q, o) };

    llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }] }, (req) => ({
      text: messageText(lastMessage(req)),
    }));
    const job = makeJob({
      origin: { ...makeJob().origin, sessionId: current.id, sessionKey: current.key },
    });
    const result = ok(await runTurn(job, makeDeps({ state })));
    expect(result.reply.text).toContain("key lives in the vault");
    expect(result.reply.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC user:/);
    expect(result.reply.text).not.toContain("bob");
    expect(result.reply.text).not.toContain("discord");
    expect(result.reply.text).not.toContain("current session");
    expect(events.some((e) => e.type === "status" && e.text.includes("deploy"))).toBe(true);
  });
});

describe("tools and prompt", () => {
  it("describes tool parameters as JSON Schema for the model", () => {
    const [tool] = toOpenAITools([sessionSearchTool]);
    expect(tool?.function.name).toBe("session_search");
    expect(tool?.function.parameters).toMatchObject({
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer" } },
      required: ["query"],
    });
    expect(tool?.function.parameters).not.toHaveProperty("$schema");
  });

  it("builds the same system prompt for the same inputs, with platform hints and the date", () => {
    const options = {
      platform: "telegram",
      platformHint: telegramPlatform.promptHint,
      chatType: "group" as const,
      userName: "Ada",
      now: Date.UTC(2024, 5, 4, 12, 30),
      timezone: "Europe/Berlin",
    };
    const prompt = buildSystemPrompt(options);
    expect(buildSystemPrompt({ ...options, now: options.now + 60_000 })).toBe(prompt);
    expect(prompt).toContain("You are Herald");
    expect(prompt).toContain("Telegram; Markdown is rendered");
    expect(prompt).toContain("the message is from Ada");
    expect(prompt).toContain("Tuesday, 4 June 2024, between 14:00 and 15:00 (Europe/Berlin)");
  });
});

describe("request size", () => {
  it("keeps tool schemas and the default persona ASCII, so an ASCII conversation's request body stays one byte per character", async () => {
    const { createToolRegistry } = await import("../../app/tools.js");
    const { toOpenAITools } = await import("../../agent/tool-registry.js");
    const { DEFAULT_PERSONA } = await import("../../agent/prompt.js");
    const registry = createToolRegistry();
    const json = JSON.stringify(toOpenAITools(registry.forToolsets(registry.toolsets()))) + DEFAULT_PERSONA;
    expect(json.match(/[^\x00-\x7f]/g) ?? []).toEqual([]);
  });
});

describe("one byte per character", () => {
  /** Whether V8 stores `text` one byte per character (its serializer tags the two layouts apart). */
  const storedOneByte = (text: string) => v8.serialize(text)[2] === 0x22;

  it("keeps the system prompt compact when its sections were cut from files with other characters", async () => {
    const { PromptBuilder } = await import("../../agent/prompt-builder.js");
    const { requestBody } = await import("../../agent/model-client.js");
    // What a SKILL.md with an arrow in its body gives: an ASCII description that V8 stores at two bytes.
    const file = "description: Brief the day.\n\n1. Order by importance: needs action → changed";
    const description = file.slice(13, 27);
    expect(storedOneByte(description)).toBe(false);
    const kv = new Map<string, string>();
    const builder = new PromptBuilder({
      persona: "persona from a config that has an é elsewhere".slice(0, 20),
      timezone: "UTC",
      snapshots: {
        get: (k) => kv.get(k),
        set: (k, v) => void kv.set(k, v),
        delete: (k) => void kv.delete(k),
      },
      sections: () => [`## Skills\n- daily-briefing: ${description}`],
      logger: silentLogger(),
    });
    const turn = {
      id: "t1",
      sessionId: "s1",
      sessionKey: "api:dm:u1",
      chat: { platform: "api", chatId: "u1" },
      userId: "u1",
      status: "running" as const,
      source: "api" as const,
      input: "hi",
      attempts: 1,
      createdAt: Date.UTC(2026, 0, 1, 12),
    };
    const prompt = builder.build(turn, "dm");
    expect(prompt).toContain("daily-briefing: Brief the day.");
    expect(storedOneByte(prompt)).toBe(true);
    const body = requestBody("m", {
      messages: [
        { role: "system", content: prompt },
        { role: "user", content: "hi" },
      ],
    });
    expect(storedOneByte(body)).toBe(true);
    // The prompt is built once per session: its date line is the session's start, an hour later too
    // (the prefix stays byte-stable for the provider's prompt cache); a new session states its own.
    expect(builder.build({ ...turn, id: "t2" }, "dm")).toBe(prompt);
    const later = builder.build({ ...turn, id: "t3", createdAt: turn.createdAt + 3600_000 }, "dm");
    expect(later).toBe(prompt);
    expect(later).toContain("between 12:00 and 13:00 (UTC)");
    const next = builder.build(
      { ...turn, id: "t6", sessionId: "s2", createdAt: turn.createdAt + 3600_000 },
      "dm",
    );
    expect(next).toContain("between 13:00 and 14:00 (UTC)");
    const group = builder.build(
      { ...turn, id: "t4", inbound: { sender: { id: "u2", name: "Ada" } } as TurnRecord["inbound"] },
      "group",
    );
    expect(group).toContain("the message is from Ada");
    expect(builder.build({ ...turn, id: "t5" }, "dm")).toBe(prompt);
  });
});

describe("the model request body", () => {
  it("sends, over the wire, the same request the SDK's chat.completions.create sends, tools included", async () => {
    const { default: OpenAI } = await import("openai");
    const registry = new ToolRegistry();
    registry.register(sessionSearchTool);
    const tools = toOpenAITools(registry.forToolsets(registry.toolsets()));
    const messages: ChatMessage[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: 'quotes " and ünïcode ✓' },
    ];
    const client = createModelClient(modelConfig());
    await client.streamChat({ messages, tools });
    await client.streamChat({ messages, tools }); // the tool JSON now comes from the cache
    const sdk = new OpenAI({ baseURL: llm.url, apiKey: "sk-test", maxRetries: 0 });
    const stream = await sdk.chat.completions.create({
      model: "main",
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of stream) {
      // drain
    }
    expect(llm.requests).toHaveLength(3);
    expect(llm.requests[0]).toEqual(llm.requests[2]);
    expect(llm.requests[1]).toEqual(llm.requests[2]);
    expect(llm.requests[0]?.tools?.[0]?.function.name).toBe("session_search");
  });
});

describe("client tools", () => {
  const weather = {
    name: "weather",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  };

  it("ends the turn at a step calling a client tool, after running Herald's own calls of the step", async () => {
    llm.script({
      text: "Checking.",
      toolCalls: [
        { name: "lookup", arguments: { key: "k" }, id: "own" },
        { name: "weather", arguments: { city: "Oslo" }, id: "theirs" },
      ],
    });
    const result = ok(await runTurn(makeJob({ clientTools: [weather] }), makeDeps()));
    expect(llm.requests[0]?.tools?.map((t) => t.function.name)).toEqual([
      "session_search",
      "lookup",
      "weather",
    ]);
    expect(llm.requests).toHaveLength(1);
    expect(result.reply.text).toBe("Checking.");
    expect(result.reply.clientCalls?.calls.map((c) => c.id)).toEqual(["theirs"]);
    expect(result.reply.clientCalls?.step.slice(1)).toEqual([
      { role: "tool", content: "value of k is 42", tool_call_id: "own" },
      { role: "tool", content: CLIENT_PENDING, tool_call_id: "theirs" },
    ]);
    // The step waits with the client, not in the session.
    expect(result.messages).toEqual([{ role: "user", content: "hi" }]);
    expect(result.usage.toolCalls).toBe(1);

    llm.script((req) => ({ text: `It is ${messageText(lastMessage(req))}.` }));
    const step = result.reply.clientCalls!.step;
    const next = ok(
      await runTurn(
        makeJob({
          input: { text: "", clientResults: { step, outputs: [{ callId: "theirs", output: "snowing" }] } },
          clientTools: [weather],
        }),
        makeDeps(),
      ),
    );
    expect(next.reply.text).toBe("It is snowing.");
    expect(next.messages.map((m) => m.role)).toEqual(["assistant", "tool", "tool", "assistant"]);
    expect(llm.requests[1]?.messages.at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: "theirs",
      content: "snowing",
    });
  });

  it("does not leave a call that needs approval waiting in a step the client's calls end", async () => {
    const danger = defineTool({
      name: "danger",
      description: "Needs approval.",
      parameters: z.object({}),
      toolset: "test",
      async execute() {
        return {
          content: "held",
          approval: { command: "rm -rf /", ruleId: "r", ruleDescription: "deletes everything" },
        };
      },
    });
    llm.script({
      toolCalls: [
        { name: "danger", arguments: {}, id: "d1" },
        { name: "weather", arguments: {}, id: "w1" },
      ],
    });
    const tools = new ToolRegistry().register(sessionSearchTool, lookupTool, danger);
    const result = ok(await runTurn(makeJob({ clientTools: [weather] }), makeDeps({ tools })));
    expect(result.reply.clientCalls?.step[1]).toMatchObject({
      role: "tool",
      tool_call_id: "d1",
      content: expect.stringMatching(/^not run: it needs the user's approval/),
    });
  });

  it("lets a client tool replace Herald's tool of the same name", async () => {
    llm.script({ toolCalls: [{ name: "lookup", arguments: { key: "k" }, id: "c1" }] });
    const before = lookupCalls.length;
    const result = ok(await runTurn(makeJob({ clientTools: [{ name: "lookup" }] }), makeDeps()));
    expect(llm.requests[0]?.tools?.filter((t) => t.function.name === "lookup")).toHaveLength(1);
    expect(result.reply.clientCalls?.calls.map((c) => c.function.name)).toEqual(["lookup"]);
    expect(lookupCalls.length).toBe(before);
  });
});
