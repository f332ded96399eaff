/**
 * The fake Responses API against the openai SDK's own Responses client: `responses.stream` accumulates
 * the fake's events into the response we scripted (text, a function call's arguments, an encrypted
 * reasoning item), `responses.create` reads it whole, errors arrive as the SDK's classes, and the fake
 * refuses a function call sent back with its item id but without the reasoning item that came with it,
 * as the API does.
 */
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encryptReasoning, type FakeResponses, startFakeResponses } from "../fakes/openai-responses/index.js";

let fake: FakeResponses;
let sdk: OpenAI;
beforeEach(async () => {
  fake = await startFakeResponses({ apiKey: "k" });
  sdk = new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
});
afterEach(async () => {
  await fake.close();
});

const tools = [
  {
    type: "function" as const,
    name: "weather",
    description: "w",
    parameters: { type: "object", properties: {} },
    strict: false,
  },
];

describe("fake Responses API through the openai SDK", () => {
  it("streams text the SDK's ResponseStream assembles", async () => {
    fake.script({ text: "Hello from the Responses fake." });
    const deltas: string[] = [];
    const stream = sdk.responses.stream({ model: "gpt-x", input: "hi" });
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const response = await stream.finalResponse();
    expect(deltas.length).toBeGreaterThan(1);
    expect(response.output_text).toBe("Hello from the Responses fake.");
    expect(response.usage?.input_tokens).toBe(fake.usages[0]!.input_tokens);
  });

  it("streams a function call and an encrypted reasoning item", async () => {
    fake.script({
      reasoning: "Check the weather tool.",
      toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }],
    });
    const response = await sdk.responses
      .stream({
        model: "o-x",
        input: "weather?",
        tools,
        reasoning: { effort: "low" },
        include: ["reasoning.encrypted_content"],
        store: false,
      })
      .finalResponse();
    const [reasoning, call] = response.output;
    expect(reasoning).toMatchObject({
      type: "reasoning",
      encrypted_content: encryptReasoning("Check the weather tool."),
    });
    expect(call).toMatchObject({ type: "function_call", name: "weather", arguments: '{"city":"Oslo"}' });
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it("answers without streaming, and errors are the SDK's classes with retry-after", async () => {
    fake.script(
      { text: "plain" },
      { error: { status: 429, message: "Rate limit reached", retryAfterSeconds: 3 } },
    );
    expect((await sdk.responses.create({ model: "m", input: "x" })).output_text).toBe("plain");
    const err = await sdk.responses.create({ model: "m", input: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("3");
  });

  it("refuses a function call sent back with its item id but without its reasoning item", async () => {
    fake.script({ reasoning: "think", toolCalls: [{ name: "weather", arguments: {}, id: "call_1" }] });
    const first = await sdk.responses.create({
      model: "o",
      input: "x",
      tools,
      reasoning: { effort: "low" },
      include: ["reasoning.encrypted_content"],
    });
    const id = first.output.find((o) => o.type === "function_call")?.id;
    const err = await sdk.responses
      .create({
        model: "o",
        tools,
        input: [
          { role: "user", content: "x" },
          { type: "function_call", id, call_id: "call_1", name: "weather", arguments: "{}" },
          { type: "function_call_output", call_id: "call_1", output: "sunny" },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(fake.rejected[0]).toMatch(/without its required 'reasoning' item/);
  });

  it("a failed response mid-stream fails the SDK's stream", async () => {
    fake.script({
      text: "partial text here",
      failMidStream: { code: "server_error", message: "The server had an error" },
    });
    const events: string[] = [];
    const stream = sdk.responses.stream({ model: "m", input: "x" });
    stream.on("event", (e) => events.push(e.type));
    await stream.done().catch(() => undefined);
    expect(events).toContain("response.failed");
  });
});
