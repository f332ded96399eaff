/**
 * What the Bedrock transport adds beyond the transport contract, against the fake Bedrock Runtime:
 * cache points after the system prompt and the tools only for a model with `cache_control: true`, the
 * cache's read and written tokens in the usage, failures inside the stream classified by their name,
 * AccessDenied as auth, and the SDK client's region and endpoint read from `base_url`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clientConfig, createBedrockTransport } from "../../agent/providers/bedrock.js";
import type { ResolvedModel } from "../../agent/providers/index.js";
import { type FakeBedrock, startFakeBedrock } from "../fakes/bedrock/index.js";

let fake: FakeBedrock;
const saved = { id: process.env["AWS_ACCESS_KEY_ID"], secret: process.env["AWS_SECRET_ACCESS_KEY"] };
beforeEach(async () => {
  process.env["AWS_ACCESS_KEY_ID"] = "AKIDTRANSPORT";
  process.env["AWS_SECRET_ACCESS_KEY"] = "transport-secret";
  fake = await startFakeBedrock({ accessKeyId: "AKIDTRANSPORT" });
});
afterEach(async () => {
  await fake.close();
  for (const [k, v] of [
    ["AWS_ACCESS_KEY_ID", saved.id],
    ["AWS_SECRET_ACCESS_KEY", saved.secret],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const transport = createBedrockTransport({ timeoutMs: 10_000 });
const target = (cache: boolean): ResolvedModel => ({
  ref: "aws/m",
  model: "amazon.nova-pro-v1:0",
  provider: { name: "aws", api: "bedrock", baseUrl: fake.url, models: [] },
  info: { name: "amazon.nova-pro-v1:0", cacheControl: cache },
});
const tools = [
  {
    type: "function" as const,
    function: { name: "weather", description: "w", parameters: { type: "object", properties: {} } },
  },
];
const messages = [
  { role: "system" as const, content: "Be brief." },
  { role: "user" as const, content: "hi" },
];

describe("Bedrock transport", () => {
  it("puts cache points after the system prompt and tools with cache_control, and reports cache tokens", async () => {
    fake.script({ text: "cached answer", cacheRead: 900, cacheWrite: 100 });
    const answer = await transport.stream(target(true), { messages, tools });
    const request = fake.requests[0]!;
    expect(request.system).toEqual([{ text: "Be brief." }, { cachePoint: { type: "default" } }]);
    expect(request.toolConfig?.tools.at(-1)).toEqual({ cachePoint: { type: "default" } });
    expect(answer.usage.cachedTokens).toBe(900);
    expect(answer.usage.cacheWriteTokens).toBe(100);
    expect(answer.usage.promptTokens).toBeGreaterThan(1000);
    fake.script({ text: "plain" });
    await transport.stream(target(false), { messages, tools });
    expect(JSON.stringify(fake.requests[1])).not.toContain("cachePoint");
  });

  it("classifies exceptions inside the stream by their name", async () => {
    fake.script({ text: "partial", streamException: { type: "throttlingException", message: "slow down" } });
    const throttled = await transport.stream(target(false), { messages }).catch((e: unknown) => e);
    expect(transport.classify(throttled)).toMatchObject({ category: "retryable", retry: true, status: 429 });
    fake.script({
      text: "partial",
      streamException: { type: "validationException", message: "Input is too long for requested model." },
    });
    const long = await transport.stream(target(false), { messages }).catch((e: unknown) => e);
    expect(transport.classify(long)).toMatchObject({ category: "context-too-long", contextTooLong: true });
    fake.script({
      error: { status: 403, message: "You don't have access to the model with the specified model ID." },
    });
    const denied = await transport.stream(target(false), { messages }).catch((e: unknown) => e);
    expect(transport.classify(denied)).toMatchObject({ category: "auth", status: 403, retry: false });
  });

  it("reads the region from AWS's host, else uses base_url as the endpoint", () => {
    const aws = clientConfig({
      name: "a",
      baseUrl: "https://bedrock-runtime.eu-west-1.amazonaws.com",
      models: [],
    });
    expect(aws).toEqual({ region: "eu-west-1", maxAttempts: 1 });
    const local = clientConfig({ name: "l", baseUrl: "http://127.0.0.1:9/", models: [] });
    expect(local.endpoint).toBe("http://127.0.0.1:9");
  });
});
