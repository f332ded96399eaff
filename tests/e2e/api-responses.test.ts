/**
 * `/v1/responses` as the official `openai` SDK uses it, over the wire against the real gateway with the
 * scripted fake model: create, stream, continue with `previous_response_id`, client function tools
 * round trip (stored and stateless), GET and DELETE, and what bad input, a key and a foreign page get.
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createApiAdapter, type ResponseStorePort, type StoredResponse } from "../../adapters/api/index.js";
import { silentLogger } from "../../core/logger.js";
import type { InboundMessage } from "../../core/types.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness?.stop();
});

const client = (h: Harness = harness, apiKey = "unused") =>
  new OpenAI({ baseURL: `${h.apiUrl}/v1`, apiKey, maxRetries: 0 });

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

/** The `error` of an SDK error, with its status. */
async function apiError(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  return { status: e.status, message: e.message, param: (e.error as { param?: string } | undefined)?.param };
}

/** The status of a POST with this Host header (fetch may not set one: a DNS-rebinding page's request). */
function postWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { host, "content-type": "application/json" } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ input: "hi" }));
  });
}

describe("POST /v1/responses", () => {
  it("answers a string input with output text and usage, and keeps it for GET until DELETE", async () => {
    harness.llm.script({ text: "Hello from the fake model." });
    const response = await client().responses.create({ model: "herald", input: "hi there" });
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe("Hello from the fake model.");
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant" });
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe(
      (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0),
    );

    const again = await client().responses.retrieve(response.id);
    expect(again.output_text).toBe("Hello from the fake model.");
    expect(again.id).toBe(response.id);

    await client().responses.delete(response.id);
    const gone = await apiError(client().responses.retrieve(response.id));
    expect(gone.status).toBe(404);
    expect(gone.message).toMatch(/No response with id/);
  });

  it("applies instructions to the turn's system prompt", async () => {
    harness.llm.script({ text: "Arr." });
    await client().responses.create({ input: "hello", instructions: "Talk like a pirate." });
    const system = harness.llm.requests.at(-1)!.messages[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain("Talk like a pirate.");
  });

  it("keeps nothing with store: false", async () => {
    harness.llm.script({ text: "not kept" });
    const response = await client().responses.create({ input: "hi", store: false });
    expect(response.output_text).toBe("not kept");
    expect((await apiError(client().responses.retrieve(response.id))).status).toBe(404);
    const next = await apiError(
      client().responses.create({ input: "more", previous_response_id: response.id }),
    );
    expect(next.status).toBe(400);
    expect(next.param).toBe("previous_response_id");
  });

  it("streams the events the SDK accumulates, in order, with the exact final text", async () => {
    harness.llm.script({ text: "a streamed answer in several pieces", pieces: 4 });
    const stream = client().responses.stream({ model: "herald", input: "stream please" });
    const types: string[] = [];
    const deltas: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas.push(event.delta);
    }
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("a streamed answer in several pieces");
    expect(final.status).toBe("completed");
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("a streamed answer in several pieces");
    const firstDelta = types.indexOf("response.output_text.delta");
    expect(types.slice(0, firstDelta)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(types.lastIndexOf("response.output_text.delta") + 1)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    // A streamed response is stored like any.
    expect((await client().responses.retrieve(final.id)).output_text).toBe(final.output_text);
  });

  it("continues the same session with previous_response_id: the model sees the earlier turn", async () => {
    harness.llm.script({ text: "Noted: your cat is Miso." });
    const first = await client().responses.create({ input: "My cat is called Miso." });
    harness.llm.script({ text: "Miso." });
    const second = await client().responses.create({
      input: [{ role: "user", content: "What is my cat called?" }],
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe("Miso.");
    expect(second.previous_response_id).toBe(first.id);
    const seen = harness.llm.requests.at(-1)!.messages.map((m) => `${m.role}: ${String(m.content)}`);
    expect(seen).toContain("user: My cat is called Miso.");
    expect(seen).toContain("assistant: Noted: your cat is Miso.");
    expect(seen.at(-1)).toBe("user: What is my cat called?");
  });

  it("seeds a new session from a stateless request's earlier items", async () => {
    harness.llm.script({ text: "Paris." });
    const response = await client().responses.create({
      input: [
        { role: "developer", content: "Answer in one word." },
        { role: "user", content: "Let's talk about France." },
        { role: "assistant", content: "Sure." },
        { role: "user", content: [{ type: "input_text", text: "And the capital?" }] },
      ],
    });
    expect(response.output_text).toBe("Paris.");
    const seen = harness.llm.requests.at(-1)!.messages.map((m) => String(m.content));
    expect(seen).toContain("Let's talk about France.");
    expect(seen).toContain("Sure.");
    expect(seen.at(-1)).toBe("And the capital?");
  });
});

describe("failures", () => {
  it("a model that is down answers a real status, streamed or not, and the server is fine after", async () => {
    for (let i = 0; i < 8; i++) harness.llm.script({ error: { status: 500, message: "upstream 500" } });
    const plain = await apiError(client().responses.create({ input: "hi" }));
    expect(plain.status).toBe(503);
    const streamed = await apiError(
      (async () => {
        for await (const _ of client().responses.stream({ input: "hi" })) {
          // drained
        }
      })(),
    );
    expect(streamed.status).toBe(503);
    harness.llm.script({ text: "back" });
    expect((await client().responses.create({ input: "hi" })).output_text).toBe("back");
  });
});

describe("a long streamed response", () => {
  it("opens with response.created before the first text, and a failure after it is response.failed", async () => {
    const kept = new Map<string, StoredResponse>();
    const store: ResponseStorePort = {
      get: (id) => kept.get(id),
      put: (r) => void kept.set(r.id, r),
      delete: (id) => kept.delete(id),
    };
    const adapter = createApiAdapter(
      { modelName: "m", streamKeepAliveMs: 100, responses: store },
      { logger: silentLogger() },
    );
    const received: InboundMessage[] = [];
    await adapter.start(async (m) => {
      received.push(m);
      return "accepted";
    });
    const server = createServer((req, res) => void adapter.handleHttp(req, res, req.url ?? "/"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      const sdk = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k", maxRetries: 0 });
      // The turn runs long (tools, say): no text for a while, yet the client has its stream.
      const stream = await sdk.responses.create({ input: "a long job", stream: true });
      const seen: { type: string; message?: string }[] = [];
      for await (const event of stream) {
        seen.push({ type: event.type, ...(event.type === "error" ? { message: event.message } : {}) });
        if (event.type === "response.in_progress") {
          const inbound = received[0]!;
          void adapter.send(inbound.chat, {
            text: "The model endpoint is not answering (503) after 4 tries; try again in a minute.",
            kind: "error",
            failure: { code: "model_unavailable" },
            replyToId: inbound.messageId,
            idempotencyKey: "e1",
          });
        }
      }
      // OpenAI's wire format: the SDK's raw stream yields them (its `responses.stream()` rejects).
      expect(seen.map((e) => e.type)).toEqual([
        "response.created",
        "response.in_progress",
        "response.failed",
        "error",
      ]);
      expect(seen.at(-1)?.message).toMatch(/not answering \(503\)/);
      const stored = JSON.parse([...kept.values()][0]!.body) as {
        response: { status: string; error: unknown };
      };
      expect(stored.response).toMatchObject({ status: "failed", error: { code: "model_unavailable" } });
    } finally {
      await adapter.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe("client function tools", () => {
  it("returns the client's calls as function_call items and carries the turn on with their outputs", async () => {
    harness.llm.script({
      toolCalls: [{ id: "call_weather_1", name: "get_weather", arguments: { city: "Lyon" } }],
    });
    const first = await client().responses.create({ input: "Weather in Lyon?", tools: [weatherTool] });
    // The model was offered the client's tool beside Herald's own.
    const offered = harness.llm.requests.at(-1)!.tools!.map((t) => t.function.name);
    expect(offered).toContain("get_weather");
    expect(offered).toContain("session_search");
    const call = first.output.find((o) => o.type === "function_call");
    expect(call).toMatchObject({
      type: "function_call",
      call_id: "call_weather_1",
      name: "get_weather",
      arguments: JSON.stringify({ city: "Lyon" }),
    });
    expect(first.output_text).toBe("");

    harness.llm.script({ text: "It is sunny in Lyon." });
    const second = await client().responses.create({
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_weather_1", output: "sunny, 24°C" }],
      tools: [weatherTool],
    });
    expect(second.output_text).toBe("It is sunny in Lyon.");
    const messages = harness.llm.requests.at(-1)!.messages;
    const asked = messages.findIndex((m) => m.tool_calls?.some((c) => c.id === "call_weather_1"));
    expect(asked).toBeGreaterThan(0);
    expect(messages[asked + 1]).toMatchObject({
      role: "tool",
      tool_call_id: "call_weather_1",
      content: "sunny, 24°C",
    });
    expect(messages.slice(0, asked).some((m) => m.content === "Weather in Lyon?")).toBe(true);

    // The step is in the session now: a later turn sees the call and its output too.
    harness.llm.script({ text: "You asked about Lyon." });
    await client().responses.create({ previous_response_id: second.id, input: "What did I ask?" });
    const later = harness.llm.requests.at(-1)!.messages;
    expect(later.some((m) => m.role === "tool" && m.content === "sunny, 24°C")).toBe(true);
  });

  it("runs Herald's own tools on the gateway in the same step and hands back only the client's", async () => {
    harness.llm.script({
      toolCalls: [
        { id: "call_own", name: "session_search", arguments: { query: "umbrella" } },
        { id: "call_client", name: "get_weather", arguments: { city: "Oslo" } },
      ],
    });
    const first = await client().responses.create({ input: "Umbrella in Oslo?", tools: [weatherTool] });
    const calls = first.output.filter((o) => o.type === "function_call");
    expect(calls.map((c) => c.type === "function_call" && c.name)).toEqual(["get_weather"]);
    harness.llm.script({ text: "Take one." });
    const second = await client().responses.create({
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_client", output: "rain" }],
      tools: [weatherTool],
    });
    expect(second.output_text).toBe("Take one.");
    const messages = harness.llm.requests.at(-1)!.messages;
    const own = messages.find((m) => m.role === "tool" && m.tool_call_id === "call_own");
    expect(own?.content).not.toMatch(/run by the client/);
    expect(messages.find((m) => m.role === "tool" && m.tool_call_id === "call_client")?.content).toBe("rain");
  });

  it("streams a client call and continues statelessly from the items the client sends back", async () => {
    harness.llm.script({
      toolCalls: [{ id: "call_s1", name: "get_weather", arguments: { city: "Rome" } }],
    });
    const stream = client().responses.stream({ input: "Rome?", tools: [weatherTool], store: false });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types).toContain("response.function_call_arguments.done");
    const call = final.output.find((o) => o.type === "function_call");
    expect(call).toMatchObject({ call_id: "call_s1", name: "get_weather" });

    harness.llm.script({ text: "Warm in Rome." });
    const next = await client().responses.create({
      store: false,
      tools: [weatherTool],
      input: [
        { role: "user", content: "Rome?" },
        { type: "function_call", call_id: "call_s1", name: "get_weather", arguments: '{"city":"Rome"}' },
        { type: "function_call_output", call_id: "call_s1", output: "30°C" },
      ],
    });
    expect(next.output_text).toBe("Warm in Rome.");
    const messages = harness.llm.requests.at(-1)!.messages;
    expect(messages.find((m) => m.role === "tool" && m.tool_call_id === "call_s1")?.content).toBe("30°C");
  });
});

describe("bad input", () => {
  it("answers 400 naming the field, and runs no turn", async () => {
    const before = harness.llm.requests.length;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ model: "herald" }, "input", /input/],
      [{ input: "" }, "input", /empty/],
      [{ input: "hi", tools: [{ type: "web_search" }] }, "tools[0].type", /declare only function tools/],
      [{ input: [{ role: "robot", content: "x" }] }, "input[0].role", /role/],
      [
        { input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] },
        "input[0].content[0].type",
        /text parts/,
      ],
      [{ input: [{ role: "assistant", content: "x" }] }, "input[0]", /must end with a user message/],
      [{ input: "hi", previous_response_id: "resp_nope" }, "previous_response_id", /not found/],
      [
        { input: [{ type: "function_call_output", call_id: "call_x", output: "1" }] },
        "input[0].call_id",
        /No function_call item with call_id 'call_x'/,
      ],
    ];
    for (const [body, param, message] of cases) {
      const err = await apiError(client().responses.create(body as never));
      expect(err.status, JSON.stringify(body)).toBe(400);
      expect(err.param, JSON.stringify(body)).toBe(param);
      expect(err.message).toMatch(message);
    }
    expect(harness.llm.requests.length).toBe(before);
  });

  it("refuses outputs that do not match the calls the previous response waits for", async () => {
    harness.llm.script({ toolCalls: [{ id: "call_w", name: "get_weather", arguments: { city: "Nice" } }] });
    const first = await client().responses.create({ input: "Nice?", tools: [weatherTool] });
    const wrong = await apiError(
      client().responses.create({
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: "call_other", output: "x" }],
      }),
    );
    expect(wrong).toMatchObject({ status: 400, param: "input[0].call_id" });
    expect(wrong.message).toMatch(/waits for call_w/);
    const missing = await apiError(
      client().responses.create({ previous_response_id: first.id, input: "never mind" }),
    );
    expect(missing).toMatchObject({ status: 400, param: "input" });
    expect(missing.message).toMatch(/function_call_output/);
  });
});

describe("access", () => {
  let keyed: Harness | undefined;
  afterEach(async () => {
    await keyed?.stop();
    keyed = undefined;
  });

  it("requires API_SERVER_KEY when set", async () => {
    keyed = await startHarness({ env: { API_SERVER_KEY: "s3cret-key" } });
    const denied = await apiError(client(keyed, "wrong").responses.create({ input: "hi" }));
    expect(denied.status).toBe(401);
    expect((await apiError(client(keyed, "wrong").responses.retrieve("resp_x"))).status).toBe(401);
    keyed.llm.script({ text: "welcome" });
    const ok = await client(keyed, "s3cret-key").responses.create({ input: "hi" });
    expect(ok.output_text).toBe("welcome");
  });

  it("holds the browser guard: a foreign page, a foreign Host and a form body are refused", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${harness.apiUrl}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ input: "hi" }),
      });
    const before = harness.llm.requests.length;
    expect((await post({ origin: "https://evil.example" })).status).toBe(403);
    expect(await postWithHost(`${harness.apiUrl}/v1/responses`, "evil.example:80")).toBe(403);
    expect((await post({ "content-type": "text/plain" })).status).toBe(415);
    const remove = await fetch(`${harness.apiUrl}/v1/responses/resp_x`, {
      method: "DELETE",
      headers: { origin: "https://evil.example" },
    });
    expect(remove.status).toBe(403);
    expect(harness.llm.requests.length).toBe(before);
  });
});

describe("durability", () => {
  it("completes the stored response of a stream whose client went away mid-answer", async () => {
    // The second piece comes long after the first: the client is gone by then, the turn is not.
    harness.llm.script({ text: "first half, second half", pieces: 2, chunkDelayMs: 2000 });
    const controller = new AbortController();
    const stream = await client().responses.create(
      { input: "answer slowly", stream: true },
      { signal: controller.signal },
    );
    let id = "";
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta") {
        controller.abort();
        break;
      }
    }
    expect(id).toMatch(/^resp_/);
    expect((await client().responses.retrieve(id)).status).toBe("in_progress");
    await vi.waitFor(async () => expect((await client().responses.retrieve(id)).status).toBe("completed"), {
      timeout: 15_000,
      interval: 200,
    });
    expect((await client().responses.retrieve(id)).output_text).toBe("first half, second half");
  });

  it("completes a response whose turn a restart cut short, when the turn runs again", async () => {
    const own = await startHarness();
    try {
      own.llm.script({ text: "cut short, never finished", pieces: 2, chunkDelayMs: 2000 });
      const stream = await client(own).responses.create({ input: "long job", stream: true });
      let id = "";
      for await (const event of stream) {
        if (event.type === "response.created") id = event.response.id;
        if (event.type === "response.output_text.delta") break;
      }
      own.llm.script({ text: "done after the restart" });
      await own.restart();
      await vi.waitFor(
        async () => expect((await client(own).responses.retrieve(id)).status).toBe("completed"),
        { timeout: 15_000, interval: 200 },
      );
      expect((await client(own).responses.retrieve(id)).output_text).toBe("done after the restart");
    } finally {
      await own.stop();
    }
  });

  it("keeps stored responses across a restart: GET and previous_response_id still work", async () => {
    const own = await startHarness();
    try {
      own.llm.script({ text: "The code word is heron." });
      const first = await client(own).responses.create({ input: "Pick a code word." });
      await own.restart();
      expect((await client(own).responses.retrieve(first.id)).output_text).toBe("The code word is heron.");
      own.llm.script({ text: "heron" });
      await client(own).responses.create({ input: "Which word?", previous_response_id: first.id });
      const seen = own.llm.requests.at(-1)!.messages.map((m) => String(m.content));
      expect(seen).toContain("The code word is heron.");
    } finally {
      await own.stop();
    }
  });
});
