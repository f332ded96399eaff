/**
 * The fake Gemini API against Google's own SDK (@google/genai) as the client: streamed text and
 * function calls with thought signatures come out of `generateContentStream` as scripted, errors are
 * the SDK's ApiError with Google's body (RetryInfo, API_KEY_INVALID), and the fake refuses a call of
 * the current turn sent back without its signature, as the API does.
 */
import { ApiError, GoogleGenAI } from "@google/genai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeGemini, signCall, startFakeGemini } from "../fakes/gemini/index.js";

let fake: FakeGemini;
let sdk: GoogleGenAI;
beforeEach(async () => {
  fake = await startFakeGemini({ apiKey: "g" });
  sdk = new GoogleGenAI({ apiKey: "g", httpOptions: { baseUrl: fake.url } });
});
afterEach(async () => {
  await fake.close();
});

const tools = [
  {
    functionDeclarations: [
      { name: "weather", description: "w", parametersJsonSchema: { type: "object", properties: {} } },
    ],
  },
];

describe("fake Gemini API through @google/genai", () => {
  it("streams text in chunks, with usage on the last", async () => {
    fake.script({ text: "Hello from the Gemini fake." });
    const stream = await sdk.models.generateContentStream({ model: "gemini-x", contents: "hi" });
    const pieces: string[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      pieces.push(chunk.text ?? "");
      usage = chunk.usageMetadata ?? usage;
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("Hello from the Gemini fake.");
    expect(usage).toMatchObject({
      promptTokenCount: fake.usages[0]!.promptTokenCount,
      candidatesTokenCount: expect.any(Number),
    });
    expect(fake.requests[0]!.model).toBe("gemini-x");
  });

  it("streams a function call signed when thinking is on", async () => {
    fake.script({ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] });
    const stream = await sdk.models.generateContentStream({
      model: "gemini-x",
      contents: "weather?",
      config: { tools, thinkingConfig: { thinkingBudget: 1024 } },
    });
    const parts = [];
    for await (const chunk of stream) parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    expect(parts[0]).toMatchObject({
      functionCall: { name: "weather", args: { city: "Oslo" } },
      thoughtSignature: signCall("weather", { city: "Oslo" }),
    });
  });

  it("answers errors as the SDK's ApiError with Google's body", async () => {
    fake.script({
      error: {
        status: 429,
        message: "Resource has been exhausted (e.g. check quota).",
        retryDelaySeconds: 2,
      },
    });
    const limited = await sdk.models.generateContent({ model: "m", contents: "x" }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ApiError);
    expect((limited as ApiError).status).toBe(429);
    expect(JSON.parse((limited as ApiError).message)).toMatchObject({
      error: { status: "RESOURCE_EXHAUSTED", details: [{ retryDelay: "2s" }] },
    });
    const wrong = new GoogleGenAI({ apiKey: "nope", httpOptions: { baseUrl: fake.url } });
    const denied = await wrong.models.generateContent({ model: "m", contents: "x" }).catch((e: unknown) => e);
    expect((denied as ApiError).status).toBe(400);
    expect((denied as ApiError).message).toContain("API_KEY_INVALID");
  });

  it("refuses a call of this turn sent back without its thought signature", async () => {
    fake.script({ toolCalls: [{ name: "weather", arguments: {} }] });
    await sdk.models.generateContent({
      model: "m",
      contents: "x",
      config: { tools, thinkingConfig: { thinkingBudget: 1024 } },
    });
    const err = await sdk.models
      .generateContent({
        model: "m",
        config: { tools, thinkingConfig: { thinkingBudget: 1024 } },
        contents: [
          { role: "user", parts: [{ text: "x" }] },
          { role: "model", parts: [{ functionCall: { name: "weather", args: {} } }] },
          { role: "user", parts: [{ functionResponse: { name: "weather", response: { result: "sunny" } } }] },
        ],
      })
      .catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(400);
    expect(fake.rejected[0]).toMatch(/missing a `thought_signature`/);
  });
});
