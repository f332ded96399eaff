/**
 * Herald on Google's Gemini API end to end: the whole gateway with a provider of `api: gemini` pointed
 * at the fake Gemini API (which refuses a call of the current turn sent back without its thought
 * signature, as the real one does), asked through the API server. A tool-using turn with thinking on,
 * a streamed reply, a 429 with RetryInfo, a prompt over the context compressed and retried, a
 * fallback to an OpenAI-compatible model mid-session, and a long system prompt and tools kept in an
 * explicit `cachedContents` entry the next turns name (made again once it expired), with `/usage`
 * showing the cached tokens.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeGemini,
  type FakeGeminiPart,
  lastUserText,
  signCall,
  startFakeGemini,
} from "../fakes/gemini/index.js";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
const fakes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const f of fakes.splice(0)) await f.close();
});

async function onGemini(persona = ""): Promise<{ gemini: FakeGemini; local: FakeLlm; h: Harness }> {
  const gemini = await startFakeGemini({ apiKey: "g-key" });
  const local = await startFakeLlm();
  fakes.push(gemini, local);
  harness = await startHarness({
    llm: local,
    env: { GEMINI_API_KEY: "g-key" },
    configYaml: `providers:
  - name: google
    api: gemini
    base_url: ${gemini.url}
    api_key_env: GEMINI_API_KEY
    models:
      - name: gemini-test
        reasoning: true
        thinking_budget: 2048
  - name: local
    base_url: ${local.url}
    models:
      - name: fake-model
model:
  default: google/gemini-test
  fallbacks: [local/fake-model]
  max_retries: 1
${persona ? `agent:\n  persona: ${JSON.stringify(persona)}\n` : ""}`,
  });
  return { gemini, local, h: harness };
}

const parts = (c: { parts: FakeGeminiPart[] } | undefined) => c?.parts ?? [];

describe("Herald on the Gemini API", () => {
  it("runs a tool-using turn with thinking: the call goes back with its thought signature", async () => {
    const { gemini, h } = await onGemini();
    const on = await chat(h, "/reasoning medium");
    gemini.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }] },
      { text: "Nothing found about deploys." },
    );
    const reply = await chat(h, "Did we talk about deploys?", { sessionId: on.sessionId! });
    expect(reply.text).toBe("Nothing found about deploys.");
    expect(gemini.rejected).toEqual([]);
    const [first, second] = gemini.requests;
    expect(first!.generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 2048 });
    expect(first!.systemInstruction?.parts[0]?.text).toBeTruthy();
    expect(first!.tools?.[0]?.functionDeclarations?.some((d) => d.name === "session_search")).toBe(true);
    const call = parts(second!.contents.at(-2)).find((p) => p.functionCall);
    expect(call).toMatchObject({
      functionCall: { name: "session_search", args: { query: "deploy" } },
      thoughtSignature: signCall("session_search", { query: "deploy" }),
    });
    const result = parts(second!.contents.at(-1)).find((p) => p.functionResponse);
    expect(result?.functionResponse?.name).toBe("session_search");
  });

  it("streams the reply to an API client piece by piece", async () => {
    const { gemini, h } = await onGemini();
    gemini.script({ text: "a streamed answer from Gemini", pieces: 4 });
    const client = new OpenAI({ baseURL: `${h.apiUrl}/v1`, apiKey: "unused" });
    const stream = await client.chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    expect(pieces.join("")).toBe("a streamed answer from Gemini");
    expect(pieces.filter(Boolean).length).toBeGreaterThan(1);
  });

  it("waits out a 429's RetryInfo, and compresses and retries a prompt over the context", async () => {
    const { gemini, local, h } = await onGemini();
    gemini.script(
      {
        error: {
          status: 429,
          message: "Resource has been exhausted (e.g. check quota).",
          retryDelaySeconds: 1,
        },
      },
      { text: "after the quota" },
    );
    expect((await chat(h, "hello")).text).toBe("after the quota");
    expect(gemini.requests).toHaveLength(2);

    let session: string | undefined;
    for (const q of ["tea", "coffee", "water", "juice"]) {
      const text = `question about ${q}: ${"details ".repeat(1500)}`;
      session = (await chat(h, text, session ? { sessionId: session } : {})).sessionId!;
    }
    gemini.script(
      {
        error: {
          status: 400,
          message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        },
      },
      { text: "SUMMARY of tea, coffee, water and juice" },
      { text: "answered after compression" },
    );
    expect((await chat(h, "and now?", { sessionId: session! })).text).toBe("answered after compression");
    const retry = gemini.requests.at(-1)!;
    expect(JSON.stringify(retry.contents)).toContain("SUMMARY of tea, coffee, water and juice");
    expect(lastUserText(retry)).toBe("and now?");
    expect(local.received()).toBe(0);
  });

  it("falls back to an OpenAI-compatible model mid-session with the history converted", async () => {
    const { gemini, local, h } = await onGemini();
    const on = await chat(h, "/reasoning low");
    gemini.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "invoices" } }] },
      { text: "No invoices found." },
    );
    expect((await chat(h, "Any invoices?", { sessionId: on.sessionId! })).text).toBe("No invoices found.");
    gemini.setDefault(() => ({
      error: { status: 503, message: "The model is overloaded. Please try again later." },
    }));
    local.script({ text: "the local model answers" });
    expect((await chat(h, "And receipts?", { sessionId: on.sessionId! })).text).toBe(
      "the local model answers",
    );
    const request = local.requests[0]!;
    expect(request.messages.map((m) => m.role).slice(-5)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    expect(messageText(request.messages.at(-1))).toBe("And receipts?");
    expect(JSON.stringify(request)).not.toContain(signCall("session_search", { query: "invoices" }));
  });

  it("keeps a long system prompt and tools in an explicit cache that the next turns name", async () => {
    const persona = "You answer as the house's careful archivist, citing what you looked up. ".repeat(260);
    const { gemini, local, h } = await onGemini(persona);
    gemini.script({ text: "first answer" }, { text: "second answer" });
    const first = await chat(h, "hello");
    expect(first.text).toBe("first answer");
    const session = first.sessionId!;
    expect((await chat(h, "and again", { sessionId: session })).text).toBe("second answer");
    expect(gemini.rejected).toEqual([]);
    const [one, two] = gemini.requests;
    const made = gemini.caches();
    expect(made).toHaveLength(1);
    expect(made[0]!.body).toContain("careful archivist");
    expect(made[0]!.model).toBe("models/gemini-test");
    // Both turns name the entry and send neither the system instruction nor the tools.
    for (const r of [one!, two!]) {
      expect(r.cachedContent).toBe(made[0]!.name);
      expect(r.systemInstruction).toBeUndefined();
      expect(r.tools).toBeUndefined();
    }
    expect(gemini.usages[1]!.cachedContentTokenCount).toBe(made[0]!.tokens);
    const usage = await chat(h, "/usage", { sessionId: session });
    const cached = gemini.usages[0]!.cachedContentTokenCount! + gemini.usages[1]!.cachedContentTokenCount!;
    expect(usage.text).toContain(`(${cached.toLocaleString("en-US")} cached`);
    // Expired: the 404 makes the transport create the entry again and send the turn once more.
    gemini.expireCaches();
    gemini.script({ text: "third answer" });
    expect((await chat(h, "once more", { sessionId: session })).text).toBe("third answer");
    expect(gemini.caches()).toHaveLength(2);
    expect(gemini.requests.at(-1)!.cachedContent).toBe(gemini.caches()[1]!.name);
    expect(local.received()).toBe(0);
  });
});
