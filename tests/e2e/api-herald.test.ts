/**
 * The API server's extensions for Herald's own chat clients, and that OpenAI's clients never see them:
 * `herald_events` brings tool progress and buttons as named SSE events (or `herald_buttons`), without
 * it the stream is plain OpenAI chunks with the buttons' text; `/v1/herald/*` reads the chat's
 * commands, status, sessions and history, behind the key like the rest of `/v1`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

const KEY = "herald-routes-key";
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(): Promise<Harness> {
  harness = await startHarness({ env: { API_SERVER_KEY: KEY, HERALD_EXEC_BACKEND: "local" } });
  return harness;
}

/** A streamed completion's raw SSE text. */
async function stream(h: Harness, text: string, sessionId: string, extra: object = {}): Promise<string> {
  const res = await fetch(`${h.apiUrl}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-herald-session-id": sessionId,
    },
    body: JSON.stringify({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: text }],
      ...extra,
    }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

async function get(h: Harness, path: string, sessionId?: string, key = KEY) {
  const res = await fetch(`${h.apiUrl}/v1/herald/${path}`, {
    headers: { authorization: `Bearer ${key}`, ...(sessionId ? { "x-herald-session-id": sessionId } : {}) },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const DANGER = "chattr -i nothing 2>/dev/null; echo ran";

describe("the API server's extensions", () => {
  it("streams tool calls and a prompt's buttons as named events to clients that ask", async () => {
    const h = await start();
    h.llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo ext-42" } }] },
      { toolCalls: [{ name: "terminal", arguments: { command: DANGER } }] },
    );
    const sse = await stream(h, "go", "ext-1", { herald_events: true });
    expect(sse).toMatch(/event: herald\.tool\ndata: \{"line":"\$ echo ext-42","callId":"[^"]+"\}/);
    expect(sse).toMatch(
      /event: herald\.tool_end\ndata: \{"callId":"[^"]+","ok":true,"durationMs":\d+,"result":"exit code 0/,
    );
    const buttons = /event: herald\.buttons\ndata: (.*)\n/.exec(sse);
    const data = JSON.parse(buttons![1]!)
      .buttons.flat()
      .map((b: { data: string }) => b.data.split(" ")[0]);
    expect(data).toEqual(["/approve", "/approve", "/deny"]);
    expect(sse).not.toContain("Reply with your choice");
    expect(sse.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("gives other clients plain OpenAI chunks and the buttons as text", async () => {
    const h = await start();
    h.llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo ext-43" } }] },
      { toolCalls: [{ name: "terminal", arguments: { command: DANGER } }] },
    );
    const sse = await stream(h, "go", "ext-2");
    expect(sse).not.toContain("event:");
    expect(sse).not.toContain("herald.");
    expect(sse).toContain("/approve");
    const plain = await chat(h, "/deny", { sessionId: "ext-2", key: KEY });
    expect(plain.status).toBe(200);
    expect(JSON.stringify(plain.body)).not.toContain("herald_buttons");
  });

  it("reads the chat's commands, status, sessions and history, behind the key", async () => {
    const h = await start();
    h.llm.script({ text: "first answer" });
    expect((await chat(h, "first question", { sessionId: "ext-3", key: KEY })).status).toBe(200);

    const commands = await get(h, "commands");
    const names = (commands.body["commands"] as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(["new", "resume", "sessions", "stop", "approve", "model"]));

    const status = await get(h, "status", "ext-3");
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      model: "fake-model",
      session: { messageCount: 2 },
      turns: { running: 0, waiting: 0 },
      queue: { workers: expect.any(Number) },
    });
    expect((status.body["usage"] as { promptTokens: number }).promptTokens).toBeGreaterThan(0);
    expect((status.body["context"] as { usedTokens: number }).usedTokens).toBeGreaterThan(0);

    const sessions = await get(h, "sessions", "ext-3");
    expect(sessions.body["sessions"]).toMatchObject([{ n: 1, current: true, messageCount: 2 }]);
    const history = await get(h, "history?limit=10", "ext-3");
    expect(history.body["messages"]).toEqual([
      { role: "user", text: "first question" },
      { role: "assistant", text: "first answer" },
    ]);

    expect((await get(h, "status")).status).toBe(400);
    expect((await get(h, "status", "ext-3", "wrong")).status).toBe(401);
    expect((await get(h, "nothing-here", "ext-3")).status).toBe(404);
  });
});
