/**
 * The fake Bedrock Runtime API against AWS's own SDK (@aws-sdk/client-bedrock-runtime) as the client:
 * ConverseStream's event-stream frames decode into the SDK's events (text deltas, a tool use with its
 * input in pieces, the stop reason, usage with the cache's tokens), every request arrives signed
 * (SigV4 `Authorization` with the access key id), Converse answers JSON, and errors come out as the SDK's
 * named exceptions (from `x-amzn-errortype`) with their HTTP status.
 */
import {
  AccessDeniedException,
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ConverseStreamOutput,
  ThrottlingException,
  ValidationException,
} from "@aws-sdk/client-bedrock-runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeBedrock, startFakeBedrock } from "../fakes/bedrock/index.js";

let fake: FakeBedrock;
let sdk: BedrockRuntimeClient;
beforeEach(async () => {
  fake = await startFakeBedrock({ accessKeyId: "AKIDUNIT" });
  sdk = new BedrockRuntimeClient({
    region: "us-west-2",
    endpoint: fake.url,
    maxAttempts: 1,
    credentials: { accessKeyId: "AKIDUNIT", secretAccessKey: "unit-secret" },
  });
});
afterEach(async () => {
  sdk.destroy();
  await fake.close();
});

const user = (text: string) => ({ role: "user" as const, content: [{ text }] });

async function events(modelId: string, text: string): Promise<ConverseStreamOutput[]> {
  const out = await sdk.send(new ConverseStreamCommand({ modelId, messages: [user(text)] }));
  const list: ConverseStreamOutput[] = [];
  for await (const e of out.stream!) list.push(e);
  return list;
}

describe("fake Bedrock Runtime through @aws-sdk/client-bedrock-runtime", () => {
  it("streams text deltas, the stop reason and usage with cache tokens, on a signed request", async () => {
    fake.script({ text: "Hello from the Bedrock fake.", cacheRead: 100, cacheWrite: 20 });
    const list = await events("anthropic.claude-x-v1:0", "hi");
    const text = list.map((e) => e.contentBlockDelta?.delta?.text ?? "").filter(Boolean);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join("")).toBe("Hello from the Bedrock fake.");
    expect(list[0]?.messageStart?.role).toBe("assistant");
    expect(list.find((e) => e.messageStop)?.messageStop?.stopReason).toBe("end_turn");
    expect(list.at(-1)?.metadata?.usage).toMatchObject({
      cacheReadInputTokens: 100,
      cacheWriteInputTokens: 20,
    });
    const request = fake.requests[0]!;
    expect(request.modelId).toBe("anthropic.claude-x-v1:0");
    expect(request.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDUNIT\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=.+, Signature=[0-9a-f]{64}$/,
    );
  });

  it("streams a tool use with its input in pieces", async () => {
    fake.script({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] });
    const list = await events("m", "weather?");
    const start = list.find((e) => e.contentBlockStart)?.contentBlockStart?.start?.toolUse;
    expect(start?.name).toBe("weather");
    expect(start?.toolUseId).toBeTruthy();
    const input = list.map((e) => e.contentBlockDelta?.delta?.toolUse?.input ?? "").join("");
    expect(JSON.parse(input)).toEqual({ city: "Oslo" });
    expect(list.find((e) => e.messageStop)?.messageStop?.stopReason).toBe("tool_use");
  });

  it("answers Converse in JSON", async () => {
    fake.script({ text: "plain answer" });
    const out = await sdk.send(new ConverseCommand({ modelId: "m", messages: [user("hi")] }));
    expect(out.output?.message?.content?.[0]?.text).toBe("plain answer");
    expect(out.stopReason).toBe("end_turn");
  });

  it("raises the SDK's named exceptions with their status", async () => {
    fake.script({ error: { status: 429, message: "Too many requests, please wait before trying again." } });
    const throttled = await events("m", "x").catch((e: unknown) => e);
    expect(throttled).toBeInstanceOf(ThrottlingException);
    expect((throttled as ThrottlingException).$metadata.httpStatusCode).toBe(429);
    fake.script({ error: { status: 400, message: "Input is too long for requested model." } });
    const long = await events("m", "x").catch((e: unknown) => e);
    expect(long).toBeInstanceOf(ValidationException);
    expect((long as Error).message).toBe("Input is too long for requested model.");
    fake.script({ error: { status: 403, message: "You don't have access to the model." } });
    expect(await events("m", "x").catch((e: unknown) => e)).toBeInstanceOf(AccessDeniedException);
  });

  it("refuses an unsigned or wrongly keyed request, and a toolResult without its toolUse", async () => {
    const stranger = new BedrockRuntimeClient({
      region: "us-west-2",
      endpoint: fake.url,
      maxAttempts: 1,
      credentials: { accessKeyId: "AKIDOTHER", secretAccessKey: "s" },
    });
    const err = await stranger
      .send(new ConverseCommand({ modelId: "m", messages: [user("hi")] }))
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe("UnrecognizedClientException");
    stranger.destroy();
    const orphan = await sdk
      .send(
        new ConverseCommand({
          modelId: "m",
          messages: [
            { role: "user", content: [{ toolResult: { toolUseId: "nope", content: [{ text: "r" }] } }] },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect(orphan).toBeInstanceOf(ValidationException);
  });
});
