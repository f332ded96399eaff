/**
 * Herald on OpenAI's Responses API end to end: the whole gateway with a provider of
 * `api: openai-responses` pointed at the fake Responses API (which refuses a function call sent back
 * with its item id but without its reasoning item, as the real one does), asked through the API server. A tool-using turn
 * with reasoning on, a streamed reply, a 429 with Retry-After, a prompt over the context compressed and
 * retried, and a fallback to Anthropic's API mid-session.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic/index.js";
import {
  encryptReasoning,
  type FakeResponses,
  lastUserInput,
  startFakeResponses,
} from "../fakes/openai-responses/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
const fakes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const f of fakes.splice(0)) await f.close();
});

/** The gateway with a reasoning model on the fake Responses API, and Claude (fake Anthropic) as fallback. */
async function onResponses(): Promise<{ oa: FakeResponses; claude: FakeAnthropic; h: Harness }> {
  const oa = await startFakeResponses({ apiKey: "sk-oa" });
  const claude = await startFakeAnthropic({ apiKey: "sk-ant" });
  fakes.push(oa, claude);
  harness = await startHarness({
    env: { OA_KEY: "sk-oa", ANTHROPIC_API_KEY: "sk-ant" },
    configYaml: `providers:
  - name: oa
    api: openai-responses
    base_url: ${oa.url}
    api_key_env: OA_KEY
    models:
      - name: o-test
        reasoning: true
  - name: claude
    api: anthropic
    base_url: ${claude.url}
    api_key_env: ANTHROPIC_API_KEY
    models:
      - name: claude-test
model:
  default: oa/o-test
  fallbacks: [claude/claude-test]
  max_retries: 1
`,
  });
  return { oa, claude, h: harness };
}

describe("Herald on the OpenAI Responses API", () => {
  it("carries the encrypted reasoning items across a tool call, and counts reasoning tokens", async () => {
    const { oa, h } = await onResponses();
    const on = await chat(h, "/reasoning high");
    oa.script(
      {
        reasoning: "Search the sessions first.",
        toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }],
      },
      { reasoning: "Nothing; say so.", text: "No deploys found." },
    );
    const reply = await chat(h, "Did we deploy?", { sessionId: on.sessionId! });
    expect(reply.text).toBe("No deploys found.");
    expect(oa.rejected).toEqual([]);
    const [first, second] = oa.requests;
    expect(first).toMatchObject({
      store: false,
      reasoning: { effort: "high" },
      include: ["reasoning.encrypted_content"],
    });
    expect(first!.tools?.some((t) => t.type === "function" && t.name === "session_search")).toBe(true);
    const input = second!.input as { type?: string; encrypted_content?: string; call_id?: string }[];
    const reasoning = input.findIndex((i) => i.type === "reasoning");
    const call = input.findIndex((i) => i.type === "function_call");
    expect(input[reasoning]?.encrypted_content).toBe(encryptReasoning("Search the sessions first."));
    expect(reasoning).toBeLessThan(call);
    // The call goes back as the API gave it, with its item id: tied to the reasoning item before it.
    expect(input[call]).toMatchObject({ id: expect.stringMatching(/^fc_/) });
    expect(input[call + 1]).toMatchObject({ type: "function_call_output", call_id: input[call]!.call_id });
    const usage = await chat(h, "/usage", { sessionId: on.sessionId! });
    const reasoningTokens = oa.usages.reduce((n, u) => n + u.output_tokens_details.reasoning_tokens, 0);
    expect(usage.text).toContain(`(${reasoningTokens.toLocaleString("en-US")} reasoning)`);
  });

  it("streams the reply to an API client piece by piece", async () => {
    const { oa, h } = await onResponses();
    oa.script({ text: "a streamed answer from the Responses API", pieces: 4 });
    const client = new OpenAI({ baseURL: `${h.apiUrl}/v1`, apiKey: "unused" });
    const stream = await client.chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    expect(pieces.join("")).toBe("a streamed answer from the Responses API");
    expect(pieces.filter(Boolean).length).toBeGreaterThan(1);
  });

  it("waits out a 429's retry-after, and compresses and retries a prompt over the context", async () => {
    const { oa, claude, h } = await onResponses();
    oa.script(
      { error: { status: 429, message: "Rate limit reached for requests", retryAfterSeconds: 1 } },
      { text: "after the limit" },
    );
    expect((await chat(h, "hello")).text).toBe("after the limit");
    expect(oa.requests).toHaveLength(2);

    let session: string | undefined;
    for (const q of ["tea", "coffee", "water", "juice"]) {
      const text = `question about ${q}: ${"details ".repeat(1500)}`;
      session = (await chat(h, text, session ? { sessionId: session } : {})).sessionId!;
    }
    oa.script(
      {
        error: {
          status: 400,
          code: "context_length_exceeded",
          message:
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
        },
      },
      { text: "SUMMARY of tea, coffee, water and juice" },
      { text: "answered after compression" },
    );
    expect((await chat(h, "and now?", { sessionId: session! })).text).toBe("answered after compression");
    const retry = oa.requests.at(-1)!;
    expect(JSON.stringify(retry.input)).toContain("SUMMARY of tea, coffee, water and juice");
    expect(lastUserInput(retry)).toBe("and now?");
    expect(claude.requests).toHaveLength(0);
  });

  it("falls back to Anthropic mid-session: tool calls and results kept, reasoning items dropped", async () => {
    const { oa, claude, h } = await onResponses();
    const on = await chat(h, "/reasoning low");
    oa.script(
      {
        reasoning: "Search first.",
        toolCalls: [{ name: "session_search", arguments: { query: "invoices" } }],
      },
      { reasoning: "Done.", text: "No invoices found." },
    );
    expect((await chat(h, "Any invoices?", { sessionId: on.sessionId! })).text).toBe("No invoices found.");
    oa.setDefault(() => ({ error: { status: 503, message: "The engine is currently overloaded" } }));
    claude.script({ text: "Claude answers instead" });
    const fellBack = await chat(h, "And receipts?", { sessionId: on.sessionId! });
    expect(fellBack.text).toBe("Claude answers instead");
    expect(claude.rejected).toEqual([]);
    const turns = claude.requests[0]!.messages;
    const blocks = turns.flatMap((t) => (typeof t.content === "string" ? [] : t.content));
    expect(blocks.find((b) => b.type === "tool_use")).toMatchObject({
      name: "session_search",
      input: { query: "invoices" },
    });
    expect(blocks.some((b) => b.type === "tool_result")).toBe(true);
    expect(JSON.stringify(claude.requests[0])).not.toContain("enc_");
    expect(turns.at(-1)?.content).toEqual([expect.objectContaining({ type: "text", text: "And receipts?" })]);
  });
});
