/**
 * The API server as the client libraries users actually use see it: the `openai` SDK, Vercel's AI SDK
 * with its openai-compatible provider, and LangChain's ChatOpenAI. Each gets a normal answer, a
 * streamed answer, and a real error (status + message) when the model fails, never a 200 with the
 * error as content. Every client runs with its own retries off so the status it saw is the server's.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness;
beforeAll(async () => {
  // HERALD_MAX_RETRIES is not a thing; the model's own retries are 3 with a 5 ms base in the harness.
  harness = await startHarness();
});
afterAll(async () => {
  await harness?.stop();
});

const baseURL = () => `${harness.apiUrl}/v1`;
/** The model fails every try of one turn (the gateway retries 3 times) with this status. */
const failModel = (status: number, retryAfterSeconds?: number) => {
  for (let i = 0; i < 4; i++)
    harness.llm.script({ error: { status, message: `upstream ${status}`, retryAfterSeconds } });
};

describe("openai SDK", () => {
  const client = () => new OpenAI({ baseURL: baseURL(), apiKey: "unused", maxRetries: 0 });

  it("gets an answer", async () => {
    harness.llm.script({ text: "Hello from the fake model." });
    const done = await client().chat.completions.create({
      model: "herald",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(done.choices[0]?.message.content).toBe("Hello from the fake model.");
  });

  it("streams an answer", async () => {
    harness.llm.script({ text: "a streamed answer in pieces" });
    const stream = await client().chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("a streamed answer in pieces");
  });

  it("raises 503 with OpenAI's error object when the model is down", async () => {
    failModel(500);
    const err = await client()
      .chat.completions.create({ model: "herald", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const apiErr = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiErr.status).toBe(503);
    expect(apiErr.message).toMatch(/model endpoint is not answering \(500\)/);
    expect(apiErr.code).toBe("model_unavailable");
    expect(apiErr.type).toBe("server_error");
  });

  it("raises 429 with retry-after when the model is rate limited", async () => {
    // A Retry-After past the gateway's own wait limit (60 s): it gives up at once and passes it on.
    harness.llm.script({ error: { status: 429, message: "slow down", retryAfterSeconds: 120 } });
    const err = (await client()
      .chat.completions.create({ model: "herald", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.headers?.get("retry-after")).toBe("120");
    expect(err.message).toMatch(/rate limiting/);
  });

  it("raises 502 when the model endpoint refuses the request, and says not to retry", async () => {
    harness.llm.script({ error: { status: 401, message: "Incorrect API key provided." } });
    const err = (await client()
      .chat.completions.create({ model: "herald", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(502);
    expect(err.message).toMatch(/401: check OPENAI_API_KEY/);
    expect(err.headers?.get("x-should-retry")).toBe("false");
  });

  it("raises the status on a stream that fails before its first token", async () => {
    failModel(503);
    const err = (await client()
      .chat.completions.create({ model: "herald", stream: true, messages: [{ role: "user", content: "hi" }] })
      .then(async (s) => {
        for await (const _ of s);
      })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(503);
  });

  it("raises an error event on a stream that fails after text went out", async () => {
    // The model streams a piece, then its connection drops: the text is out, the 200 too.
    harness.llm.script({
      sse: [
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "fake-model", choices: [{ index: 0, delta: { role: "assistant", content: "partial " }, finish_reason: null }] })}\n\n`,
        `data: ${JSON.stringify({ error: { message: "overloaded mid-answer", type: "server_error" } })}\n\n`,
      ],
    });
    const stream = await client().chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    let text = "";
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e: unknown) => e);
    expect(text).toBe("partial ");
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toMatch(/failed while answering/);
  });

  it("answers a bad body with 400 naming the field", async () => {
    const err = (await client()
      .chat.completions.create({
        model: "herald",
        messages: [{ role: "wizard", content: "hi" } as never],
      })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(/messages\[0\]\.role/);
    expect(err.param).toBe("messages[0].role");
  });
});

describe("Vercel AI SDK (openai-compatible provider)", () => {
  const model = () =>
    createOpenAICompatible({ name: "herald", baseURL: baseURL(), apiKey: "unused" }).chatModel("herald");

  it("gets an answer", async () => {
    harness.llm.script({ text: "Answer for the AI SDK." });
    const result = await generateText({ model: model(), prompt: "hi", maxRetries: 0 });
    expect(result.text).toBe("Answer for the AI SDK.");
  });

  it("streams an answer", async () => {
    harness.llm.script({ text: "streamed for the AI SDK" });
    const result = streamText({ model: model(), prompt: "hi", maxRetries: 0 });
    let text = "";
    for await (const piece of result.textStream) text += piece;
    expect(text).toBe("streamed for the AI SDK");
  });

  it("raises an APICallError with the status and message when the model is down", async () => {
    failModel(502);
    const err = (await generateText({ model: model(), prompt: "hi", maxRetries: 0 }).catch(
      (e: unknown) => e,
    )) as { statusCode?: number; message: string; name: string };
    expect(err.name).toBe("AI_APICallError");
    expect(err.statusCode).toBe(503);
    expect(err.message).toMatch(/model endpoint is not answering \(502\)/);
  });

  it("reports the status on a stream that fails", async () => {
    failModel(500);
    const errors: unknown[] = [];
    const result = streamText({
      model: model(),
      prompt: "hi",
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    let text = "";
    for await (const piece of result.textStream) text += piece;
    expect(text).toBe("");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ statusCode: 503 });
  });
});

describe("LangChain ChatOpenAI", () => {
  const chatModel = () =>
    new ChatOpenAI({
      model: "herald",
      apiKey: "unused",
      configuration: { baseURL: baseURL() },
      maxRetries: 0,
    });

  it("gets an answer", async () => {
    harness.llm.script({ text: "Answer for LangChain." });
    const message = await chatModel().invoke("hi");
    expect(message.content).toBe("Answer for LangChain.");
  });

  it("streams an answer", async () => {
    harness.llm.script({ text: "streamed for LangChain" });
    let text = "";
    for await (const chunk of await chatModel().stream("hi")) text += String(chunk.content);
    expect(text).toBe("streamed for LangChain");
  });

  it("raises the status and message when the model times out or is down", async () => {
    failModel(503);
    const err = (await chatModel()
      .invoke("hi")
      .catch((e: unknown) => e)) as { status?: number; message: string };
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/model endpoint is not answering \(503\)/);
  });
});
