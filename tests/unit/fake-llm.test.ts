import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";

let llm: FakeLlm;
let client: OpenAI;

beforeEach(async () => {
  llm = await startFakeLlm({ apiKey: "sk-test" });
  client = new OpenAI({ baseURL: llm.url, apiKey: "sk-test", maxRetries: 0 });
});

afterEach(async () => {
  await llm.close();
});

describe("fake LLM", () => {
  it("echoes the last user message through the SDK's strict stream helper, with usage", async () => {
    const stream = client.chat.completions.stream({
      model: "fake-model",
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "hello there" },
      ],
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    stream.on("content", (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe("echo: hello there");
    expect(final.choices[0]?.finish_reason).toBe("stop");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("echo: hello there");
    expect(final.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.messages).toHaveLength(3);
  });

  it("streams tool calls that the SDK assembles into whole calls", async () => {
    llm.script({
      text: "Looking.",
      toolCalls: [
        { name: "session_search", arguments: { query: "deploy notes", limit: 3 }, id: "call_a" },
        { name: "other", arguments: '{"x":1}' },
      ],
    });
    const stream = client.chat.completions.stream({
      model: "fake-model",
      messages: [{ role: "user", content: "find it" }],
      tools: [
        { type: "function", function: { name: "session_search", parameters: { type: "object" } } },
        { type: "function", function: { name: "other", parameters: { type: "object" } } },
      ],
    });
    const final = await stream.finalChatCompletion();
    const choice = final.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Looking.");
    const calls = choice.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    const [first, second] = calls;
    expect(first?.id).toBe("call_a");
    expect(first?.type === "function" && JSON.parse(first.function.arguments)).toEqual({
      query: "deploy notes",
      limit: 3,
    });
    expect(second?.type === "function" && second.function.name).toBe("other");
    expect(second?.id).toMatch(/^call_/);
    expect(llm.requests[0]?.tools?.map((t) => t.function.name)).toEqual(["session_search", "other"]);
  });

  it("answers without streaming and lists models", async () => {
    llm.script({ text: "plain" });
    const res = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(res.choices[0]?.message.content).toBe("plain");
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["fake-model"]);
  });

  it("returns scripted errors with retry-after and rejects a wrong key", async () => {
    llm.script({ error: { status: 429, message: "slow down", retryAfterSeconds: 2 } });
    const err = await client.chat.completions
      .create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const rate = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rate.message).toContain("slow down");
    expect(rate.headers?.get("retry-after")).toBe("2");

    const bad = new OpenAI({ baseURL: llm.url, apiKey: "wrong", maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("matches steps by model and by function, leaving others for the default", async () => {
    llm.script({ model: "backup", text: "from backup" }, (req) => ({
      text: `fn saw ${req.messages.length}`,
    }));
    const ask = async (model: string) =>
      (await client.chat.completions.create({ model, messages: [{ role: "user", content: "x" }] })).choices[0]
        ?.message.content;
    expect(await ask("main")).toBe("fn saw 1");
    expect(await ask("main")).toBe("echo: x");
    expect(await ask("backup")).toBe("from backup");
    expect(llm.pending()).toBe(0);
  });

  it("notices a client that disconnects during a delayed stream", async () => {
    llm.script({ text: "a long answer that never arrives whole", chunkDelayMs: 60_000 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: "fake-model", messages: [{ role: "user", content: "x" }], stream: true },
      { signal: controller.signal },
    );
    let chunks = 0;
    // The SDK ends the iteration quietly on abort; the point is that the fake sees the close.
    await (async () => {
      for await (const _chunk of stream) {
        chunks++;
        controller.abort();
      }
    })().catch(() => undefined);
    expect(chunks).toBeGreaterThan(0);
    await llm.waitForClosedEarly(1);
    expect(llm.closedEarly).toHaveLength(1);
  });
});

describe("fake LLM without kept requests (the benchmark's)", () => {
  it("answers and counts requests but keeps no bodies", async () => {
    const lean = await startFakeLlm({ keepRequests: false });
    try {
      const sdk = new OpenAI({ baseURL: lean.url, apiKey: "x", maxRetries: 0 });
      const answer = await sdk.chat.completions.create({
        model: "fake-model",
        messages: [{ role: "user", content: "hi" }],
      });
      expect(answer.choices[0]?.message.content).toBe("echo: hi");
      await lean.waitForRequests(1);
      expect(lean.received()).toBe(1);
      expect(lean.requests).toEqual([]);
    } finally {
      await lean.close();
    }
  });
});
