/**
 * Herald on Amazon Bedrock end to end: the whole gateway with a provider of `api: bedrock` pointed at
 * the fake Bedrock Runtime (ConverseStream's binary event stream, SigV4-checked with the AWS
 * credentials of the environment), asked through the API server: a tool-using turn whose result goes
 * back as a toolResult, cache points after the system prompt and the tools, a streamed reply, a
 * throttling 429 waited out and retried, and `/reasoning` turning on Claude's extended thinking with
 * the signed reasoning sent back before the tool call (the fake refuses it otherwise).
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeBedrock, startFakeBedrock } from "../fakes/bedrock/index.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
const fakes: { close(): Promise<void> }[] = [];
const saved = { ...process.env };
beforeAll(() => {
  process.env["AWS_ACCESS_KEY_ID"] = "AKIDE2E";
  process.env["AWS_SECRET_ACCESS_KEY"] = "e2e-secret";
  process.env["AWS_REGION"] = "eu-central-1";
});
afterAll(() => {
  for (const k of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const f of fakes.splice(0)) await f.close();
});

async function onBedrock(): Promise<{ bedrock: FakeBedrock; local: FakeLlm; h: Harness }> {
  const bedrock = await startFakeBedrock({ accessKeyId: "AKIDE2E" });
  const local = await startFakeLlm();
  fakes.push(bedrock, local);
  harness = await startHarness({
    llm: local,
    configYaml: `providers:
  - name: aws
    api: bedrock
    base_url: ${bedrock.url}
    models:
      - name: anthropic.claude-test-v1:0
        cache_control: true
        reasoning: true
  - name: local
    base_url: ${local.url}
    models:
      - name: fake-model
model:
  default: aws/anthropic.claude-test-v1:0
  fallbacks: [local/fake-model]
  max_retries: 1
`,
  });
  return { bedrock, local, h: harness };
}

describe("Herald on Amazon Bedrock", () => {
  it("runs a tool-using turn: toolUse answered by a toolResult, with cache points", async () => {
    const { bedrock, local, h } = await onBedrock();
    bedrock.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }] },
      { text: "Nothing found about deploys." },
    );
    const reply = await chat(h, "Did we talk about deploys?");
    expect(reply.text).toBe("Nothing found about deploys.");
    const [first, second] = bedrock.requests;
    expect(first!.modelId).toBe("anthropic.claude-test-v1:0");
    expect(first!.authorization).toContain("Credential=AKIDE2E/");
    expect(first!.system?.[0]?.text).toBeTruthy();
    expect(first!.system?.at(-1)).toEqual({ cachePoint: { type: "default" } });
    expect(first!.toolConfig?.tools.some((t) => t.toolSpec?.name === "session_search")).toBe(true);
    expect(first!.toolConfig?.tools.at(-1)).toEqual({ cachePoint: { type: "default" } });
    const use = second!.messages.at(-2)?.content.find((b) => b.toolUse)?.toolUse;
    expect(use).toMatchObject({ name: "session_search", input: { query: "deploy" } });
    const result = second!.messages.at(-1)?.content.find((b) => b.toolResult)?.toolResult;
    expect(result?.toolUseId).toBe(use?.toolUseId);
    expect(local.received()).toBe(0);
  });

  it("streams the reply to an API client piece by piece", async () => {
    const { bedrock, h } = await onBedrock();
    bedrock.script({ text: "a streamed answer from Bedrock", pieces: 4 });
    const client = new OpenAI({ baseURL: `${h.apiUrl}/v1`, apiKey: "unused" });
    const stream = await client.chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    expect(pieces.join("")).toBe("a streamed answer from Bedrock");
    expect(pieces.filter(Boolean).length).toBeGreaterThan(1);
  });

  it("waits out a throttling 429 and succeeds on the retry", async () => {
    const { bedrock, local, h } = await onBedrock();
    bedrock.script(
      {
        error: {
          status: 429,
          message: "Too many requests, please wait before trying again.",
          retryAfterSeconds: 1,
        },
      },
      { text: "after the throttle" },
    );
    expect((await chat(h, "hello")).text).toBe("after the throttle");
    expect(bedrock.requests).toHaveLength(2);
    expect(local.received()).toBe(0);
  });

  it("turns on extended thinking with /reasoning and sends the signed reasoning back across the tool call", async () => {
    const { bedrock, local, h } = await onBedrock();
    bedrock.script({ text: "no thinking yet" });
    const off = await chat(h, "hello");
    expect(bedrock.requests[0]!.additionalModelRequestFields).toBeUndefined();
    const on = await chat(h, "/reasoning high", { sessionId: off.sessionId! });
    expect(on.text).toContain("high");
    bedrock.script(
      {
        reasoning: "The user asks about deploys; search the sessions first.",
        toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }],
      },
      { reasoning: "Nothing found; say so.", text: "No deploys found." },
    );
    const reply = await chat(h, "Did we deploy?", { sessionId: off.sessionId! });
    expect(reply.text).toBe("No deploys found.");
    const [, first, second] = bedrock.requests;
    expect(first!.additionalModelRequestFields).toEqual({
      thinking: { type: "enabled", budget_tokens: 24_576 },
    });
    expect(first!.inferenceConfig?.maxTokens).toBeGreaterThan(24_576);
    const assistant = second!.messages.at(-2)!.content;
    expect(assistant[0]?.reasoningContent).toEqual({
      reasoningText: {
        text: "The user asks about deploys; search the sessions first.",
        signature: expect.stringMatching(/^fake-signature-/),
      },
    });
    expect(assistant[1]?.toolUse?.name).toBe("session_search");
    expect(bedrock.requests).toHaveLength(3);
    expect(local.received()).toBe(0);
  });
});
