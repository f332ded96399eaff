/**
 * The fake Anthropic API against Anthropic's own SDK as the client: if the SDK's stream helper
 * assembles the fake's events into the message we scripted (text, signed thinking, tool input), reads
 * its errors into the SDK's error classes with their headers, and sees cache reads on a repeated
 * prefix, the fake speaks the wire format the transport will meet.
 */
import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeAnthropic, signThinking, startFakeAnthropic } from "../fakes/anthropic/index.js";

let fake: FakeAnthropic;
let sdk: Anthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: "k" });
  sdk = new Anthropic({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
});
afterEach(async () => {
  await fake.close();
});

const user = (text: string) => ({ role: "user" as const, content: text });

describe("fake Anthropic API through @anthropic-ai/sdk", () => {
  it("streams text the SDK's MessageStream assembles, with the usage it reported", async () => {
    fake.script({ text: "Hello from the fake, streamed." });
    const deltas: string[] = [];
    const stream = sdk.messages.stream({ model: "claude-x", max_tokens: 100, messages: [user("hi")] });
    stream.on("text", (t) => deltas.push(t));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello from the fake, streamed.");
    expect(message.stop_reason).toBe("end_turn");
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: "text", text: "Hello from the fake, streamed." });
    expect(message.usage.output_tokens).toBe(fake.usages[0]!.output_tokens);
    expect(fake.headers[0]!["anthropic-version"]).toBeTruthy();
  });

  it("streams a signed thinking block and a tool call's input in pieces", async () => {
    fake.script({
      thinking: "The user wants the weather.",
      toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }],
    });
    const message = await sdk.messages
      .stream({
        model: "claude-x",
        max_tokens: 4000,
        thinking: { type: "enabled", budget_tokens: 2048 },
        tools: [
          {
            name: "weather",
            description: "w",
            input_schema: { type: "object", properties: { city: { type: "string" } } },
          },
        ],
        messages: [user("weather in Oslo?")],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    const [thinking, call] = message.content;
    expect(thinking).toMatchObject({
      type: "thinking",
      thinking: "The user wants the weather.",
      signature: signThinking("The user wants the weather."),
    });
    expect(call).toMatchObject({ type: "tool_use", name: "weather", input: { city: "Oslo" } });
  });

  it("answers without streaming too", async () => {
    fake.script({ text: "plain" });
    const message = await sdk.messages.create({ model: "claude-x", max_tokens: 10, messages: [user("hi")] });
    expect(message.content[0]).toMatchObject({ type: "text", text: "plain" });
  });

  it("errors arrive as the SDK's classes, with retry-after and the API's error type", async () => {
    fake.script({
      error: {
        status: 429,
        message: "Number of request tokens has exceeded your per-minute rate limit",
        retryAfterSeconds: 7,
      },
    });
    const limited = await sdk.messages
      .create({ model: "m", max_tokens: 10, messages: [user("x")] })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as APIError).headers?.get("retry-after")).toBe("7");
    expect((limited as APIError).error).toMatchObject({
      type: "error",
      error: { type: "rate_limit_error" },
    });

    const wrongKey = new Anthropic({ baseURL: fake.url, apiKey: "nope", maxRetries: 0 });
    await expect(
      wrongKey.messages.create({ model: "m", max_tokens: 10, messages: [user("x")] }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("refuses what the real API refuses: a tool result without its call, a tampered thinking block", async () => {
    const orphan = await sdk.messages
      .create({
        model: "m",
        max_tokens: 10,
        messages: [
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "x" }] },
        ],
      })
      .catch((e: unknown) => e);
    expect(orphan).toBeInstanceOf(Anthropic.BadRequestError);
    const tampered = await sdk.messages
      .create({
        model: "m",
        max_tokens: 4000,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [
          user("x"),
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "edited", signature: "forged" },
              { type: "tool_use", id: "t1", name: "w", input: {} },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
        ],
      })
      .catch((e: unknown) => e);
    expect(tampered).toBeInstanceOf(Anthropic.BadRequestError);
    expect(fake.rejected).toHaveLength(2);
  });

  it("an error event mid-stream fails the SDK's stream", async () => {
    fake.script({
      text: "partial answer here",
      streamError: { type: "overloaded_error", message: "Overloaded" },
    });
    const stream = sdk.messages.stream({ model: "m", max_tokens: 10, messages: [user("x")] });
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
  });

  it("reads a repeated prefix from its cache at a breakpoint and writes the rest", async () => {
    const system = [
      {
        type: "text" as const,
        text: "You are Herald. ".repeat(200),
        cache_control: { type: "ephemeral" as const },
      },
    ];
    await sdk.messages.create({ model: "m", max_tokens: 10, system, messages: [user("one")] });
    await sdk.messages.create({ model: "m", max_tokens: 10, system, messages: [user("two")] });
    expect(fake.usages[0]!.cache_creation_input_tokens).toBeGreaterThan(700);
    expect(fake.usages[0]!.cache_read_input_tokens).toBe(0);
    expect(fake.usages[1]!.cache_read_input_tokens).toBe(fake.usages[0]!.cache_creation_input_tokens);
  });
});
