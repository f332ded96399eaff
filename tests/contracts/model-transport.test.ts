/**
 * Runs the ModelTransport contract against each wire protocol's transport and its vendor's fake API:
 * OpenAI Chat Completions (tests/fakes/llm), OpenAI Responses (tests/fakes/openai-responses),
 * Anthropic Messages (tests/fakes/anthropic), Google Gemini (tests/fakes/gemini) and Amazon Bedrock's
 * Converse (tests/fakes/bedrock, signed with the AWS credentials of the environment).
 */
import { createAnthropicTransport } from "../../agent/providers/anthropic.js";
import { createBedrockTransport } from "../../agent/providers/bedrock.js";
import { createGeminiTransport } from "../../agent/providers/gemini.js";
import { createOpenAIChatTransport } from "../../agent/providers/openai-chat.js";
import { createOpenAIResponsesTransport } from "../../agent/providers/openai-responses.js";
import { startFakeAnthropic } from "../fakes/anthropic/index.js";
import { startFakeBedrock } from "../fakes/bedrock/index.js";
import { startFakeGemini } from "../fakes/gemini/index.js";
import { messageText, startFakeLlm } from "../fakes/llm/index.js";
import { startFakeResponses } from "../fakes/openai-responses/index.js";
import { modelTransportContract } from "./model-transport.contract.js";

const options = { timeoutMs: 10_000 };

modelTransportContract("openai-chat", async () => {
  const fake = await startFakeLlm({ apiKey: "k" });
  const sse = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`;
  return {
    transport: createOpenAIChatTransport(options),
    target: {
      ref: "p/m",
      model: "m",
      provider: { name: "p", baseUrl: fake.url, apiKey: "k", models: [{ name: "m" }] },
      info: { name: "m" },
    },
    text: (text) => fake.script({ text }),
    toolCall: (name, args) => fake.script({ toolCalls: [{ name, arguments: args }] }),
    error: (status, message, retryAfterSeconds) =>
      fake.script({ error: { status, message, retryAfterSeconds } }),
    refusal: () =>
      fake.script({
        sse: [
          sse({
            id: "c",
            object: "chat.completion.chunk",
            created: 0,
            model: "m",
            choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }],
          }),
          sse({
            id: "c",
            object: "chat.completion.chunk",
            created: 0,
            model: "m",
            choices: [{ index: 0, delta: {}, finish_reason: "content_filter" }],
          }),
          "data: [DONE]\n\n",
        ],
      }),
    contextTooLong: {
      status: 400,
      message:
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
    },
    lastRequestHasImage: (b64) =>
      JSON.stringify(fake.requests.at(-1)?.messages).includes(
        `"image_url":{"url":"data:image/png;base64,${b64}"}`,
      ),
    lastRequestText: () => {
      const messages = fake.requests.at(-1)?.messages ?? [];
      return messages.map((m) => messageText(m)).join("\n");
    },
    close: () => fake.close(),
  };
});

modelTransportContract("anthropic", async () => {
  const fake = await startFakeAnthropic({ apiKey: "k" });
  return {
    transport: createAnthropicTransport(options),
    target: {
      ref: "claude/claude-x",
      model: "claude-x",
      provider: {
        name: "claude",
        api: "anthropic",
        baseUrl: fake.url,
        apiKey: "k",
        models: [{ name: "claude-x" }],
      },
      info: { name: "claude-x" },
    },
    text: (text) => fake.script({ text }),
    toolCall: (name, args) => fake.script({ toolCalls: [{ name, arguments: args }] }),
    error: (status, message, retryAfterSeconds) =>
      fake.script({ error: { status, message, retryAfterSeconds } }),
    refusal: () => fake.script({ refusal: true }),
    contextTooLong: { status: 400, message: "prompt is too long: 214522 tokens > 200000 maximum" },
    lastRequestHasImage: (b64) => {
      const last = fake.requests.at(-1)?.messages.at(-1);
      return JSON.stringify(last?.content).includes(
        `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"${b64}"}`,
      );
    },
    lastRequestText: () => JSON.stringify(fake.requests.at(-1)?.messages.at(-1)?.content),
    close: () => fake.close(),
  };
});

modelTransportContract("openai-responses", async () => {
  const fake = await startFakeResponses({ apiKey: "k" });
  return {
    transport: createOpenAIResponsesTransport(options),
    target: {
      ref: "oa/o-x",
      model: "o-x",
      provider: {
        name: "oa",
        api: "openai-responses",
        baseUrl: fake.url,
        apiKey: "k",
        models: [{ name: "o-x" }],
      },
      info: { name: "o-x" },
    },
    text: (text) => fake.script({ text }),
    toolCall: (name, args) => fake.script({ toolCalls: [{ name, arguments: args }] }),
    error: (status, message, retryAfterSeconds) =>
      fake.script({ error: { status, message, retryAfterSeconds } }),
    refusal: () => fake.script({ refusal: "I can't help with that." }),
    contextTooLong: {
      status: 400,
      message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
    },
    lastRequestHasImage: (b64) =>
      JSON.stringify(fake.requests.at(-1)?.input).includes(
        `{"type":"input_image","image_url":"data:image/png;base64,${b64}"`,
      ),
    lastRequestText: () => JSON.stringify(fake.requests.at(-1)?.input),
    close: () => fake.close(),
  };
});

modelTransportContract("gemini", async () => {
  const fake = await startFakeGemini({ apiKey: "k" });
  return {
    transport: createGeminiTransport(options),
    target: {
      ref: "g/gemini-x",
      model: "gemini-x",
      provider: { name: "g", api: "gemini", baseUrl: fake.url, apiKey: "k", models: [{ name: "gemini-x" }] },
      info: { name: "gemini-x" },
    },
    text: (text) => fake.script({ text }),
    toolCall: (name, args) => fake.script({ toolCalls: [{ name, arguments: args }] }),
    error: (status, message, retryAfterSeconds) =>
      status === 401
        ? fake.script({ error: { status: 400, message: "API key not valid.", reason: "API_KEY_INVALID" } })
        : fake.script({ error: { status, message, retryDelaySeconds: retryAfterSeconds } }),
    refusal: () => fake.script({ blocked: true }),
    contextTooLong: {
      status: 400,
      message: "The input token count (1234567) exceeds the maximum number of tokens allowed (1048576).",
    },
    lastRequestHasImage: (b64) =>
      JSON.stringify(fake.requests.at(-1)?.contents).includes(
        `{"inlineData":{"mimeType":"image/png","data":"${b64}"}}`,
      ),
    lastRequestText: () => JSON.stringify(fake.requests.at(-1)?.contents.at(-1)),
    close: () => fake.close(),
  };
});

modelTransportContract("bedrock", async () => {
  process.env["AWS_ACCESS_KEY_ID"] = "AKIDCONTRACT";
  process.env["AWS_SECRET_ACCESS_KEY"] = "contract-secret";
  const fake = await startFakeBedrock({ accessKeyId: "AKIDCONTRACT" });
  return {
    transport: createBedrockTransport(options),
    target: {
      ref: "aws/claude-x",
      model: "anthropic.claude-x-v1:0",
      provider: {
        name: "aws",
        api: "bedrock",
        baseUrl: fake.url,
        models: [{ name: "anthropic.claude-x-v1:0" }],
      },
      info: { name: "anthropic.claude-x-v1:0" },
    },
    text: (text) => fake.script({ text }),
    toolCall: (name, args) => fake.script({ toolCalls: [{ name, arguments: args }] }),
    error: (status, message, retryAfterSeconds) =>
      fake.script({ error: { status, message, retryAfterSeconds } }),
    refusal: () => fake.script({ guardrail: true }),
    contextTooLong: { status: 400, message: "Input is too long for requested model." },
    lastRequestHasImage: (b64) =>
      JSON.stringify(fake.requests.at(-1)?.messages.at(-1)?.content).includes(
        `{"image":{"format":"png","source":{"bytes":"${b64}"}}}`,
      ),
    lastRequestText: () => JSON.stringify(fake.requests.at(-1)?.messages.at(-1)?.content),
    close: () => fake.close(),
  };
});
