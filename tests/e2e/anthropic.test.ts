/**
 * Herald on Anthropic's Messages API end to end: the whole gateway with a provider of `api: anthropic`
 * pointed at the fake Anthropic API (which refuses what the real one refuses), asked through the API
 * server as a client would. A tool-using turn, a streamed reply, a 429 with Retry-After, a prompt over
 * the context that is compressed and retried, cache breakpoints on a byte-identical prefix, thinking
 * blocks carried across a tool call, and a fallback to an OpenAI-compatible model mid-session.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeAnthropic,
  type FakeAnthropicBlock,
  type FakeAnthropicRequest,
  lastUserText,
  signThinking,
  startFakeAnthropic,
} from "../fakes/anthropic/index.js";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
const fakes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const f of fakes.splice(0)) await f.close();
});

/** The gateway with Claude (the fake Anthropic API) as the default model and a local chat model as fallback. */
async function onClaude(extraModel = ""): Promise<{ claude: FakeAnthropic; local: FakeLlm; h: Harness }> {
  const claude = await startFakeAnthropic({ apiKey: "sk-ant-test" });
  const local = await startFakeLlm();
  fakes.push(claude, local);
  harness = await startHarness({
    llm: local,
    env: { ANTHROPIC_API_KEY: "sk-ant-test" },
    configYaml: `providers:
  - name: claude
    api: anthropic
    base_url: ${claude.url}
    api_key_env: ANTHROPIC_API_KEY
    models:
      - name: claude-test
        reasoning: true
        thinking_budget: 2048
        price: { input: 3, output: 15, cached: 0.3, cache_write: 3.75 }${extraModel}
  - name: local
    base_url: ${local.url}
    models:
      - name: fake-model
model:
  default: claude/claude-test
  fallbacks: [local/fake-model]
  max_retries: 1
`,
  });
  return { claude, local, h: harness };
}

const blocks = (m: FakeAnthropicRequest["messages"][number] | undefined): FakeAnthropicBlock[] =>
  !m ? [] : typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;

/** The request's prompt in cache order with its breakpoints, markers taken out: what a cache keys on. */
function promptOf(body: FakeAnthropicRequest): { blocks: string[]; breakpoints: number[] } {
  const out: string[] = [];
  const breakpoints: number[] = [];
  const push = (value: { cache_control?: unknown }, role = "") => {
    const { cache_control, ...rest } = value;
    if (cache_control) breakpoints.push(out.length);
    out.push(role + JSON.stringify(rest));
  };
  for (const t of body.tools ?? []) push(t);
  for (const b of typeof body.system === "string" ? [] : (body.system ?? [])) push(b);
  for (const m of body.messages) for (const b of blocks(m)) push(b, `${m.role}:`);
  return { blocks: out, breakpoints };
}

describe("Herald on the Anthropic Messages API", () => {
  it("runs a tool-using turn: the tool result goes back as a tool_result of the call", async () => {
    const { claude, h } = await onClaude();
    claude.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }] },
      { text: "Nothing found about deploys." },
    );
    const reply = await chat(h, "Did we talk about deploys?");
    expect(reply.text).toBe("Nothing found about deploys.");
    expect(claude.rejected).toEqual([]);
    const [first, second] = claude.requests;
    expect(first!.tools?.some((t) => t.name === "session_search" && t.input_schema)).toBe(true);
    expect(first!.system).toBeDefined();
    const call = blocks(second!.messages.at(-2)).find((b) => b.type === "tool_use");
    const result = blocks(second!.messages.at(-1)).find((b) => b.type === "tool_result");
    expect(call).toMatchObject({ name: "session_search", input: { query: "deploy" } });
    expect(result?.tool_use_id).toBe(call?.id);
    expect(claude.headers[0]!.authorization).toBe("Bearer sk-ant-test");
  });

  it("streams the reply to an API client piece by piece", async () => {
    const { claude, h } = await onClaude();
    claude.script({ text: "a streamed answer from Claude", pieces: 4 });
    const client = new OpenAI({ baseURL: `${h.apiUrl}/v1`, apiKey: "unused" });
    const stream = await client.chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    expect(pieces.join("")).toBe("a streamed answer from Claude");
    expect(pieces.filter(Boolean).length).toBeGreaterThan(1);
  });

  it("waits out a 429's retry-after and answers", async () => {
    const { claude, local, h } = await onClaude();
    claude.script(
      {
        error: {
          status: 429,
          message: "Number of request tokens has exceeded your per-minute rate limit",
          retryAfterSeconds: 1,
        },
      },
      { text: "after the rate limit" },
    );
    const reply = await chat(h, "hello");
    expect(reply.text).toBe("after the rate limit");
    expect(claude.requests).toHaveLength(2);
    expect(local.received()).toBe(0);
  });

  it("compresses the history and retries when the prompt is too long for the model", async () => {
    const { claude, h } = await onClaude();
    let session: string | undefined;
    // Long exchanges (the fake echoes each question), so there is a middle to summarise.
    for (const q of ["tea", "coffee", "water", "juice"]) {
      const text = `question about ${q}: ${"details ".repeat(1500)}`;
      session = (await chat(h, text, session ? { sessionId: session } : {})).sessionId!;
    }
    const before = claude.requests.length;
    claude.script(
      { error: { status: 400, message: "prompt is too long: 214522 tokens > 200000 maximum" } },
      { text: "SUMMARY of tea, coffee and water" },
      { text: "answered after compression" },
    );
    const reply = await chat(h, "and now?", { sessionId: session! });
    expect(reply.text).toBe("answered after compression");
    const retry = claude.requests.at(-1)!;
    expect(claude.requests.length).toBe(before + 3);
    expect(JSON.stringify(retry)).toContain("SUMMARY of tea, coffee and water");
    expect(lastUserText(retry)).toContain("and now?");
    expect(claude.rejected).toEqual([]);
  });

  it("puts cache breakpoints on a prefix the next turn repeats byte for byte, and /usage shows the cache", async () => {
    const { claude, h } = await onClaude();
    const first = await chat(h, "first question");
    await chat(h, "second question", { sessionId: first.sessionId! });
    const [one, two] = claude.requests.map(promptOf);
    // Breakpoints: the last tool, the system prompt, the request's end (turn 1 has no history yet).
    expect(claude.requests[0]!.tools?.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(one!.breakpoints.length).toBeLessThanOrEqual(4);
    expect(two!.breakpoints.length).toBeLessThanOrEqual(4);
    // Everything up to the first request's last breakpoint is repeated block for block, byte for byte.
    const end = one!.breakpoints.at(-1)!;
    expect(two!.blocks.slice(0, end + 1)).toEqual(one!.blocks.slice(0, end + 1));
    // The second request marks the end of the stored history (the first answer) and its own end.
    const answer = two!.blocks.findIndex((b) => b.startsWith("assistant:"));
    expect(two!.breakpoints).toContain(answer);
    expect(two!.breakpoints.at(-1)).toBe(two!.blocks.length - 1);
    expect(claude.usages[1]!.cache_read_input_tokens).toBeGreaterThan(0);
    expect(claude.usages[1]!.cache_read_input_tokens).toBeGreaterThan(claude.usages[1]!.input_tokens);

    const usage = await chat(h, "/usage", { sessionId: first.sessionId! });
    const read = claude.usages[0]!.cache_read_input_tokens + claude.usages[1]!.cache_read_input_tokens;
    const written =
      claude.usages[0]!.cache_creation_input_tokens + claude.usages[1]!.cache_creation_input_tokens;
    expect(usage.text).toContain(
      `(${read.toLocaleString("en-US")} cached, ${written.toLocaleString("en-US")} written to cache)`,
    );
  });

  it("sends the signed thinking blocks back before the tool call in the next step", async () => {
    const { claude, h } = await onClaude();
    const on = await chat(h, "/reasoning medium");
    const session = on.sessionId!;
    claude.script(
      {
        thinking: "The user asks about deploys; search first.",
        toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }],
      },
      { thinking: "Nothing found; say so.", text: "No deploys found." },
    );
    const reply = await chat(h, "Did we deploy?", { sessionId: session });
    expect(reply.text).toBe("No deploys found.");
    expect(claude.rejected).toEqual([]);
    const [first, second] = claude.requests;
    expect(first!.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(first!.max_tokens).toBeGreaterThan(2048);
    const assistant = blocks(second!.messages.at(-2));
    expect(assistant[0]).toEqual({
      type: "thinking",
      thinking: "The user asks about deploys; search first.",
      signature: signThinking("The user asks about deploys; search first."),
    });
    expect(assistant[1]).toMatchObject({ type: "tool_use", name: "session_search" });
    const usage = await chat(h, "/usage", { sessionId: session });
    expect(usage.text).toMatch(/out \([\d,]+ reasoning\)/);
  });

  it("falls back to an OpenAI-compatible model mid-session with the history converted", async () => {
    const { claude, local, h } = await onClaude();
    await chat(h, "/reasoning low").then(async (on) => {
      claude.script(
        {
          thinking: "Search first.",
          toolCalls: [{ name: "session_search", arguments: { query: "invoices" } }],
        },
        { thinking: "Done.", text: "No invoices found." },
      );
      const first = await chat(h, "Any invoices?", { sessionId: on.sessionId! });
      expect(first.text).toBe("No invoices found.");
      // Claude is overloaded from here on: the turn falls back to the local chat model.
      claude.setDefault(() => ({ error: { status: 529, type: "overloaded_error", message: "Overloaded" } }));
      local.script({ text: "the local model answers" });
      const second = await chat(h, "And receipts?", { sessionId: on.sessionId! });
      expect(second.text).toBe("the local model answers");
    });
    const request = local.requests[0]!;
    // The stored history arrives in the chat shape: the tool call and its result kept, thinking dropped.
    const roles = request.messages.map((m) => m.role);
    expect(roles.slice(-5)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(
      request.messages.find((m) => m.role === "assistant" && m.tool_calls)?.tool_calls?.[0]?.function.name,
    ).toBe("session_search");
    expect(messageText(request.messages.at(-1))).toBe("And receipts?");
    expect(JSON.stringify(request)).not.toContain("Search first.");
    expect(JSON.stringify(request)).not.toContain("signature");
  });
});
