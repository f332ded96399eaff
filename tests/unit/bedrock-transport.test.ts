/**
 * What the Bedrock transport adds beyond the transport contract, against the fake Bedrock Runtime:
 * cache points after the system prompt and the tools only for a model with `cache_control: true`, the
 * cache's read and written tokens in the usage, failures inside the stream classified by their name,
 * AccessDenied as auth, the signing region read from `base_url`, and a SigV4 signature equal to the
 * one AWS's own signer (@smithy/signature-v4, what the SDK signs with) makes of the same request.
 */
import { createHash, createHmac } from "node:crypto";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bedrockRegion, createBedrockTransport } from "../../agent/providers/bedrock.js";
import { eventMessages, signRequest } from "../../agent/providers/bedrock-wire.js";
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

  it("reads the region from AWS's host, else from AWS_REGION", () => {
    const aws = bedrockRegion({
      name: "a",
      baseUrl: "https://bedrock-runtime.eu-west-1.amazonaws.com",
      models: [],
    });
    expect(aws).toEqual({ region: "eu-west-1", baseUrl: "https://bedrock-runtime.eu-west-1.amazonaws.com" });
    const before = process.env["AWS_REGION"];
    process.env["AWS_REGION"] = "ap-south-1";
    try {
      const local = bedrockRegion({ name: "l", baseUrl: "http://127.0.0.1:9/", models: [] });
      expect(local).toEqual({ region: "ap-south-1", baseUrl: "http://127.0.0.1:9" });
    } finally {
      if (before === undefined) delete process.env["AWS_REGION"];
      else process.env["AWS_REGION"] = before;
    }
  });

  it("signs as AWS's own SigV4 signer does, session token included", async () => {
    const bytes = (d: string | ArrayBuffer | ArrayBufferView) =>
      typeof d === "string"
        ? d
        : ArrayBuffer.isView(d)
          ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength)
          : new Uint8Array(d);
    /** The SHA-256 the signer is given, on node:crypto. */
    class Sha256 {
      readonly #hash;
      constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
        this.#hash = secret ? createHmac("sha256", bytes(secret)) : createHash("sha256");
      }
      update(data: string | ArrayBuffer | ArrayBufferView) {
        this.#hash.update(bytes(data));
      }
      async digest() {
        return new Uint8Array(this.#hash.digest());
      }
    }
    const credentials = { accessKeyId: "AKIDSIGN", secretAccessKey: "sign-secret", sessionToken: "tok" };
    const date = new Date("2026-11-29T04:05:06Z");
    const url = new URL(
      "https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3%3A0/converse-stream",
    );
    const body = '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}';
    const ours = await signRequest({
      method: "POST",
      url,
      headers: { "content-type": "application/json", "x-extra": "  two  spaces " },
      body,
      region: "eu-west-1",
      service: "bedrock",
      credentials,
      date,
    });
    // As the Bedrock client configures it: no x-amz-content-sha256 header (that is S3's).
    const signer = new SignatureV4({
      credentials,
      region: "eu-west-1",
      service: "bedrock",
      sha256: Sha256,
      applyChecksum: false,
    });
    const theirs = await signer.sign(
      {
        method: "POST",
        protocol: "https:",
        hostname: url.hostname,
        path: url.pathname,
        query: {},
        headers: { "content-type": "application/json", "x-extra": "  two  spaces ", host: url.host },
        body,
      },
      { signingDate: date },
    );
    expect(ours["authorization"]).toBe(theirs.headers["authorization"]);
    expect(ours["x-amz-security-token"]).toBe("tok");
  });
});

describe("Bedrock event stream frames", () => {
  const codec = new EventStreamCodec(
    (bytes) => new TextDecoder().decode(bytes),
    (text) => new TextEncoder().encode(text),
  );
  const frame = codec.encode({
    headers: {
      ":event-type": { type: "string", value: "contentBlockDelta" },
      ":message-type": { type: "string", value: "event" },
    },
    body: new TextEncoder().encode('{"delta":{"text":"hi"}}'),
  });
  async function* pieces(...parts: Uint8Array[]) {
    for (const part of parts) yield part;
  }
  const read = async (...parts: Uint8Array[]) => {
    const out: { type: string | undefined; body: string }[] = [];
    for await (const m of eventMessages(pieces(...parts)))
      out.push({ type: m.headers[":event-type"], body: m.body.toString("utf8") });
    return out;
  };

  it("decodes frames split anywhere across chunks", async () => {
    const two = new Uint8Array([...frame, ...frame]);
    expect(
      await read(two.subarray(0, 3), two.subarray(3, frame.length + 7), two.subarray(frame.length + 7)),
    ).toEqual([
      { type: "contentBlockDelta", body: '{"delta":{"text":"hi"}}' },
      { type: "contentBlockDelta", body: '{"delta":{"text":"hi"}}' },
    ]);
  });

  it("refuses a frame whose checksum is wrong, and a body that ends inside a frame", async () => {
    const bad = new Uint8Array(frame);
    bad[bad.length - 6] = bad[bad.length - 6]! ^ 0xff;
    await expect(read(bad)).rejects.toMatchObject({ name: "ModelStreamErrorException" });
    await expect(read(frame.subarray(0, frame.length - 5))).rejects.toMatchObject({
      name: "ModelStreamErrorException",
      message: expect.stringContaining("cut short"),
    });
  });
});
