/**
 * Providers end to end: two fake model servers as two providers in config.yaml, the whole gateway, the
 * API server (through the openai SDK where a client would use it) and Telegram. `/model` switches the
 * next request to the other server, 500s fall back across providers, a refused key is told to the owner
 * once, `/usage` and the API's `usage` equal what the fake model reported, and two consecutive requests
 * of one session share their prefix byte for byte.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { FakeLlm } from "../fakes/llm/index.js";
import { messageText, startFakeLlm } from "../fakes/llm/index.js";
import { startFakeTelegram } from "../fakes/telegram/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import { botReplies } from "./telegram-helpers.js";

let harness: Harness | undefined;
const fakes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const f of fakes.splice(0)) await f.close();
});

/** Two providers: `main` (priced, key from MAIN_KEY) and `other` (reasoning), `other` the fallback. */
function providersYaml(a: FakeLlm, b: FakeLlm): string {
  return `providers:
  - name: main
    base_url: ${a.url}
    api_key_env: MAIN_KEY
    headers:
      X-Title: Herald tests
    models:
      - name: model-a
        context_tokens: 64000
        price: { input: 2, output: 8, cached: 0.5 }
  - name: other
    base_url: ${b.url}
    models:
      - name: model-b
        reasoning: true
model:
  default: main/model-a
  fallbacks: [other/model-b]
`;
}

async function twoProviders(options: { env?: Record<string, string>; aKey?: string } = {}) {
  const a = await startFakeLlm(options.aKey ? { apiKey: options.aKey } : {});
  const b = await startFakeLlm();
  fakes.push(a, b);
  harness = await startHarness({
    llm: a,
    configYaml: providersYaml(a, b),
    env: { MAIN_KEY: "key-a", ...options.env },
  });
  return { a, b, h: harness };
}

/** Sums the usage a fake reported. */
function reported(llm: FakeLlm) {
  return llm.usages.reduce(
    (s, u) => ({
      prompt: s.prompt + u.prompt_tokens,
      completion: s.completion + u.completion_tokens,
      cached: s.cached + (u.prompt_tokens_details?.cached_tokens ?? 0),
    }),
    { prompt: 0, completion: 0, cached: 0 },
  );
}

/** Reads "Total: 1,234 in (56 cached), 78 out" of a /usage reply. */
function totalOf(text: string) {
  const m = /Total: ([\d,]+) in \(([\d,]+) cached\), ([\d,]+) out/.exec(text);
  if (!m) throw new Error(`no total in: ${text}`);
  const num = (s: string) => Number(s.replaceAll(",", ""));
  return { prompt: num(m[1]!), cached: num(m[2]!), completion: num(m[3]!) };
}

describe("providers", () => {
  it("/model lists the providers' models and switches this session: the next request goes to the other server", async () => {
    const { a, b, h } = await twoProviders();
    const first = await chat(h, "hello");
    expect(first.text).toBe("echo: hello");
    expect(a.requests.map((r) => r.model)).toEqual(["model-a"]);
    const session = first.sessionId!;

    const list = await chat(h, "/model", { sessionId: session });
    expect(list.text).toContain("Model: main/model-a (default)");
    expect(list.text).toContain("• main/model-a (64k context, $2/$8 per M in/out) ← this session");
    expect(list.text).toContain("• other/model-b (reasoning)");

    const switched = await chat(h, "/model other/model-b", { sessionId: session });
    expect(switched.text).toBe("Switched this session to other/model-b.");
    expect((await chat(h, "/status", { sessionId: session })).text).toContain("Model: other/model-b");
    const next = await chat(h, "still there?", { sessionId: session });
    expect(next.text).toBe("echo: still there?");
    expect(b.requests.map((r) => r.model)).toEqual(["model-b"]);
    // The other server got the whole session so far.
    expect(b.requests[0]!.messages.map((m) => m.content)).toContain("hello");
    expect(a.requests).toHaveLength(1);

    // Only this session: another chat, and this chat's next session after /new, start on the default.
    await chat(h, "new conversation");
    expect(a.requests).toHaveLength(2);
    await chat(h, "/new", { sessionId: session });
    await chat(h, "fresh start", { sessionId: session });
    expect(a.requests).toHaveLength(3);
    expect(b.requests).toHaveLength(1);
    const unknown = await chat(h, "/model nope", { sessionId: session });
    expect(unknown.text).toMatch(/^There is no model 'nope' here\./);
  });

  it("falls back across providers when the first answers 500", async () => {
    const { a, b, h } = await twoProviders();
    a.setDefault(() => ({ error: { status: 500, message: "upstream down" } }));
    const reply = await chat(h, "anyone?");
    expect(reply.text).toBe("echo: anyone?");
    // The configured retries on the first provider (3 after the first try), then the other provider.
    expect(a.requests).toHaveLength(4);
    expect(b.requests.map((r) => r.model)).toEqual(["model-b"]);
    const usage = await chat(h, "/usage", { sessionId: reply.sessionId! });
    expect(usage.text).toContain("• other/model-b:");
    expect(usage.text).not.toContain("main/model-a");
  });

  it("sends each provider the key its api_key_env names and its own extra headers", async () => {
    const { a, b, h } = await twoProviders({ aKey: "key-a" });
    // The fake answers 401 to any other key: an answer means the key from MAIN_KEY was sent.
    const first = await chat(h, "with my key");
    expect(first.text).toBe("echo: with my key");
    expect(a.requests).toHaveLength(1);
    expect(a.headers[0]).toMatchObject({ authorization: "Bearer key-a", "x-title": "Herald tests" });
    await chat(h, "/model other", { sessionId: first.sessionId! });
    await chat(h, "keyless", { sessionId: first.sessionId! });
    expect(b.headers[0]?.["x-title"]).toBeUndefined();
    expect(b.headers[0]?.authorization).toBe("Bearer not-set");
  });

  it("/usage equals the sum of the usage the model reported over several turns, cached tokens and cost included", async () => {
    const { a, h } = await twoProviders();
    a.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "plans" } }] },
      { text: "Nothing yet." },
    );
    const first = await chat(h, "What were our plans?");
    const session = first.sessionId!;
    await chat(h, "Then let us make some.", { sessionId: session });
    await chat(h, "A third question, to grow the shared prefix.", { sessionId: session });
    const sum = reported(a);
    expect(a.usages).toHaveLength(4);
    // The later requests repeat the earlier ones' prefix: the (simulated) provider cache served part.
    expect(sum.cached).toBeGreaterThan(0);

    const usage = await chat(h, "/usage", { sessionId: session });
    expect(usage.text).toContain("Usage of this session (4 model calls):");
    expect(totalOf(usage.text)).toEqual(sum);
    const cost = ((sum.prompt - sum.cached) * 2 + sum.cached * 0.5 + sum.completion * 8) / 1_000_000;
    expect(usage.text).toContain(`$${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)} estimated`);

    // Stored per turn and model in SQLite, the same figures.
    const lines = h.state.usage.forSession(h.state.sessions.list({ activeOnly: true })[0]!.id);
    expect(lines.map((l) => [l.model, l.promptTokens, l.completionTokens, l.cachedTokens, l.calls])).toEqual([
      ["main/model-a", sum.prompt, sum.completion, sum.cached, 4],
    ]);
    // `herald sessions show` ends with the same usage.
    const cli = fileURLToPath(new URL("../../app/cli.ts", import.meta.url));
    const id = h.state.sessions.list({ activeOnly: true })[0]!.id;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", cli, "sessions", "show", id],
      {
        env: { ...process.env, HERALD_HOME: h.homeDir, MAIN_KEY: "key-a", HERALD_LOG_LEVEL: "silent" },
      },
    );
    expect(stdout).toContain("Usage (4 model calls):");
    expect(totalOf(stdout)).toEqual(sum);
    // The API's caller is the owner: /usage all shows every model and user.
    const all = await chat(h, "/usage all", { sessionId: session });
    expect(all.text).toContain("All usage by model (4 model calls):");
    expect(all.text).toContain("By user:\n• api:api:");
  });

  it("reports real usage in the API's answer, non-streaming and streaming with include_usage, through the openai SDK", async () => {
    const { a, h } = await twoProviders();
    const sdk = new OpenAI({ baseURL: `${h.apiUrl}/v1`, apiKey: "unused", maxRetries: 0 });
    const answer = await sdk.chat.completions.create({
      model: "herald",
      messages: [{ role: "user", content: "count my tokens" }],
    });
    expect(answer.choices[0]?.message.content).toBe("echo: count my tokens");
    const one = a.usages[0]!;
    expect(answer.usage).toMatchObject({
      prompt_tokens: one.prompt_tokens,
      completion_tokens: one.completion_tokens,
      total_tokens: one.prompt_tokens + one.completion_tokens,
    });
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);

    const stream = await sdk.chat.completions.create({
      model: "herald",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "and streamed" }],
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("echo: and streamed");
    const two = a.usages[1]!;
    expect(usage).toMatchObject({
      prompt_tokens: two.prompt_tokens,
      completion_tokens: two.completion_tokens,
      prompt_tokens_details: { cached_tokens: two.prompt_tokens_details?.cached_tokens },
    });

    // Without include_usage, no usage chunk (as OpenAI does).
    const plain = await sdk.chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "no usage please" }],
    });
    const chunks = [];
    for await (const chunk of plain) chunks.push(chunk);
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  it("counts tokens on /metrics by kind and model", async () => {
    const { a, h } = await twoProviders();
    const first = await chat(h, "one");
    await chat(h, "two", { sessionId: first.sessionId! });
    const sum = reported(a);
    const text = await (await fetch(`${h.apiUrl}/metrics`)).text();
    expect(text).toContain(`herald_tokens_total{kind="prompt",model="main/model-a"} ${sum.prompt}\n`);
    expect(text).toContain(`herald_tokens_total{kind="completion",model="main/model-a"} ${sum.completion}\n`);
    expect(text).toContain(`herald_tokens_total{kind="cached",model="main/model-a"} ${sum.cached}\n`);
  });

  it("sends /reasoning's effort to a model that declares reasoning, and not to one that does not", async () => {
    const { a, b, h } = await twoProviders();
    const first = await chat(h, "/reasoning high");
    expect(first.text).toContain("Reasoning effort for this session: high.");
    expect(first.text).toContain("main/model-a declares no reasoning support");
    const session = first.sessionId!;
    await chat(h, "think", { sessionId: session });
    expect(a.requests[0]).not.toHaveProperty("reasoning_effort");
    await chat(h, "/model other/model-b", { sessionId: session });
    await chat(h, "think harder", { sessionId: session });
    expect(b.requests[0]?.["reasoning_effort"]).toBe("high");
    expect((await chat(h, "/reasoning", { sessionId: session })).text).toBe("Reasoning effort: high.");
    await chat(h, "/reasoning off", { sessionId: session });
    await chat(h, "no thinking", { sessionId: session });
    expect(b.requests[1]).not.toHaveProperty("reasoning_effort");
  });

  it("keeps the request prefix of two consecutive turns of a session byte-identical up to the new messages", async () => {
    const { a, h } = await twoProviders();
    const first = await chat(h, "first question");
    await chat(h, "second question", { sessionId: first.sessionId! });
    const [one, two] = a.bodies;
    // The tools come first, then the messages: everything up to the end of the first request's last
    // message is repeated byte for byte; only the new messages follow.
    const end = one!.lastIndexOf("]}");
    expect(end).toBeGreaterThan(0);
    expect(two!.startsWith(one!.slice(0, end))).toBe(true);
    expect(two!.indexOf('"tools":[')).toBeLessThan(two!.indexOf('"messages":['));
    const added = JSON.parse(two!).messages.slice(JSON.parse(one!).messages.length);
    expect(added.map((m: { role: string }) => m.role)).toEqual(["assistant", "user"]);
    expect(end / two!.length).toBeGreaterThan(0.95);
  });
});

describe("prompt-cache markers", () => {
  it("marks the system prompt and the last stored message for a model that wants cache_control, moving with the session", async () => {
    const a = await startFakeLlm();
    const b = await startFakeLlm();
    fakes.push(a, b);
    harness = await startHarness({
      llm: a,
      configYaml: providersYaml(a, b).replace(
        "context_tokens: 64000",
        "context_tokens: 64000\n        cache_control: true",
      ),
      env: { MAIN_KEY: "key-a" },
    });
    const first = await chat(harness, "first");
    await chat(harness, "second", { sessionId: first.sessionId! });
    const marked = (r: (typeof a.requests)[number]) =>
      r.messages.flatMap((m, i) =>
        Array.isArray(m.content) && m.content.some((p) => (p as { cache_control?: unknown }).cache_control)
          ? [i]
          : [],
      );
    const [one, two] = a.requests;
    // First turn: no history yet, only the system prompt. Second: also the last stored message (the answer).
    expect(marked(one!)).toEqual([0]);
    expect(marked(two!)).toEqual([0, 2]);
    expect(messageText(two!.messages[2])).toBe("echo: first");
    expect(two!.messages.at(-1)).toEqual({ role: "user", content: "second" });
    // The other provider's model wants none.
    await chat(harness, "/model other", { sessionId: first.sessionId! });
    await chat(harness, "third", { sessionId: first.sessionId! });
    expect(b.requests[0]!.messages.every((m) => typeof m.content === "string")).toBe(true);
  });
});

describe("auxiliary models", () => {
  it("runs the learning review on auxiliary.review's provider while turns stay on the default", async () => {
    const a = await startFakeLlm();
    const b = await startFakeLlm();
    fakes.push(a, b);
    harness = await startHarness({
      llm: a,
      configYaml: `${providersYaml(a, b)}auxiliary:\n  review: other/model-b\n`,
      env: { MAIN_KEY: "key-a", HERALD_LEARNING_RESET_MIN_TURNS: "2" },
    });
    const h = harness;
    const first = await chat(h, "I'm Alice and I run a tea shop");
    await chat(h, "keep answers short please", { sessionId: first.sessionId! });
    b.script({ text: "Nothing worth saving." });
    await chat(h, "/new", { sessionId: first.sessionId! });
    await b.waitForRequests(1);
    await h.gateway.learning.reviewer!.idle();
    expect(b.requests[0]!.model).toBe("model-b");
    expect(messageText(b.requests[0]!.messages.at(-1))).toContain("tea shop");
    expect(a.requests.map((r) => r.model)).toEqual(["model-a", "model-a"]);
    // The review's tokens count toward the reviewed session, under the review's model.
    const all = await chat(h, "/usage all");
    const b0 = b.usages[0]!;
    expect(all.text).toContain(
      `• other/model-b: ${b0.prompt_tokens.toLocaleString("en-US")} in (0 cached), ${b0.completion_tokens.toLocaleString("en-US")} out, 1 call`,
    );
  });
});

describe("a provider that refuses its key", () => {
  it("is told to the owner once, not on every turn, while the fallback answers", async () => {
    const telegram = await startFakeTelegram();
    const a = await startFakeLlm({ apiKey: "the-real-key" });
    const b = await startFakeLlm();
    fakes.push(a, b);
    harness = await startHarness({
      llm: a,
      configYaml: providersYaml(a, b),
      env: {
        MAIN_KEY: "a-revoked-key",
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_ROOT: telegram.url,
        TELEGRAM_ALLOWED_USERS: "111,222",
        GATEWAY_OWNERS: "telegram:111",
      },
    });
    fakes.unshift(telegram);
    telegram.userSends({ chatId: 111, fromId: 111, text: "first" });
    const texts = await botReplies(telegram, 111, 2);
    expect(texts).toContain("echo: first");
    const notice = texts.find((t) => t.includes("answered 401"));
    expect(notice).toContain("Provider 'main' answered 401 for main/model-a");
    expect(notice).toContain("check MAIN_KEY");
    expect(notice).not.toContain("a-revoked-key");

    telegram.userSends({ chatId: 111, fromId: 111, text: "second" });
    await botReplies(telegram, 111, 3);
    telegram.userSends({ chatId: 111, fromId: 111, text: "third" });
    const later = await botReplies(telegram, 111, 4);
    await harness.gateway.runner.outbox.idle();
    expect(later.filter((t) => t.includes("answered 401"))).toHaveLength(1);
    expect(later).toEqual(expect.arrayContaining(["echo: second", "echo: third"]));
    expect(b.requests).toHaveLength(3);
    // A user who is not the owner hears nothing of it, sees no one else's usage, and may pick only
    // the models config lists (an unlisted one could cost anything).
    telegram.userSends({ chatId: 222, fromId: 222, text: "/usage all" });
    expect(await botReplies(telegram, 222, 1)).toEqual(["Only the owner can see everyone's usage."]);
    telegram.userSends({ chatId: 222, fromId: 222, text: "/model main/an-unlisted-model" });
    expect((await botReplies(telegram, 222, 2))[1]).toMatch(
      /^There is no model 'main\/an-unlisted-model' here\./,
    );
    telegram.userSends({ chatId: 222, fromId: 222, text: "/model other" });
    expect((await botReplies(telegram, 222, 3))[2]).toBe("Switched this session to other/model-b.");
    // The owner may.
    telegram.userSends({ chatId: 111, fromId: 111, text: "/model main/an-unlisted-model" });
    expect((await botReplies(telegram, 111, 5))[4]).toBe("Switched this session to main/an-unlisted-model.");
  });
});
