import { afterEach, describe, expect, it } from "vitest";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("API server", () => {
  it("answers a turn with a tool call and keeps the session for the next turn", async () => {
    harness = await startHarness();
    const { llm } = harness;
    llm.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "deploy" } }] },
      { text: "Nothing found about deploys." },
    );
    const first = await chat(harness, "Did we talk about deploys?");
    expect(first.status).toBe(200);
    expect(first.text).toBe("Nothing found about deploys.");
    expect(first.sessionId).toBeTruthy();
    // The model saw the tool result before answering.
    const second = llm.requests[1]!;
    expect(second.messages.some((m) => m.role === "tool")).toBe(true);

    llm.script((req) => ({
      text: `I remember ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    const next = await chat(harness, "And now?", { sessionId: first.sessionId! });
    expect(next.text).toBe("I remember 2 questions");
    const last = llm.requests.at(-1)!;
    expect(last.messages.map((m) => m.content)).toContain("Did we talk about deploys?");
  });

  it("streams a reply as server-sent events", async () => {
    harness = await startHarness();
    harness.llm.script({ text: "streamed answer here" });
    const res = await fetch(`${harness.apiUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "herald", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const raw = await res.text();
    const events = raw
      .split("\n\n")
      .filter((e) => e.startsWith("data: "))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    const pieces = events
      .slice(0, -1)
      .map((e) => JSON.parse(e) as { choices: { delta: { content?: string } }[] })
      .map((c) => c.choices[0]?.delta.content ?? "");
    expect(pieces.join("")).toBe("streamed answer here");
    // As the model wrote it, piece by piece, not all at the end.
    expect(pieces.filter(Boolean).length).toBeGreaterThan(1);
  });

  it("answers a body that is not JSON, or is over 10 MB, with a 400 and no turn", async () => {
    harness = await startHarness();
    const post = (body: string) =>
      fetch(`${harness!.apiUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    const broken = await post('{"messages": [');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { message: string } }).error.message).toMatch(/not valid JSON/);
    const huge = await post(
      JSON.stringify({ messages: [{ role: "user", content: "x".repeat(10_500_000) }] }),
    );
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { error: { message: string } }).error.message).toMatch(
      /over 10485760 bytes/,
    );
    expect(harness.llm.requests).toHaveLength(0);
    // The connection and the server are fine afterwards.
    expect((await chat(harness, "still there?")).status).toBe(200);
  });

  it("/new starts a clean session", async () => {
    harness = await startHarness();
    const first = await chat(harness, "remember the word kiwi");
    const sessionId = first.sessionId!;
    const reset = await chat(harness, "/new", { sessionId });
    expect(reset.text).toMatch(/new session/i);
    await chat(harness, "what was the word?", { sessionId });
    const last = harness.llm.requests.at(-1)!;
    expect(JSON.stringify(last.messages)).not.toContain("kiwi");
  });

  it("seeds a new session from the request's own history", async () => {
    harness = await startHarness();
    const reply = await chat(harness, "and the capital?", {
      history: [
        { role: "user", content: "Let's talk about France." },
        { role: "assistant", content: "Sure." },
      ],
    });
    expect(reply.status).toBe(200);
    const sent = harness.llm.requests[0]!.messages.map((m) => m.content);
    expect(sent).toContain("Let's talk about France.");
  });

  it("requires the key when one is set, and lists models", async () => {
    harness = await startHarness({ env: { API_SERVER_KEY: "s3cret-key" } });
    const denied = await chat(harness, "hi");
    expect(denied.status).toBe(401);
    const ok = await chat(harness, "hi", { key: "s3cret-key" });
    expect(ok.status).toBe(200);
    const models = await fetch(`${harness.apiUrl}/v1/models`, {
      headers: { authorization: "Bearer s3cret-key" },
    });
    const body = (await models.json()) as { data: { id: string }[] };
    expect(body.data.map((m) => m.id)).toContain("herald");
  });

  it("reports health", async () => {
    harness = await startHarness();
    const res = await fetch(`${harness.apiUrl}/health`);
    const body = (await res.json()) as { status: string; adapters: Record<string, unknown> };
    expect(res.status).toBe(200);
    expect(body.status).toBe("ok");
    expect(Object.keys(body.adapters)).toContain("api");
  });

  it("reports turns and the process's memory on /metrics", async () => {
    harness = await startHarness();
    await chat(harness, "hello");
    const text = await (await fetch(`${harness.apiUrl}/metrics`)).text();
    expect(text).toMatch(/^herald_turns_finished_total\{outcome="ok",platform="api"\} 1$/m);
    const value = (series: string) => Number(new RegExp(`^${series} (\\d+)$`, "m").exec(text)?.[1]);
    expect(value("process_resident_memory_bytes")).toBeGreaterThan(10_000_000);
    expect(value('nodejs_heap_bytes\\{kind="used"\\}')).toBeGreaterThan(1_000_000);
    expect(value('nodejs_heap_bytes\\{kind="total"\\}')).toBeGreaterThanOrEqual(
      value('nodejs_heap_bytes\\{kind="used"\\}'),
    );
  });
});
