/**
 * Context compaction over a long conversation, through the API server and the real runner: each
 * compaction is recorded by sequence number, its summary is built from everything it replaces (an
 * earlier summary included), and what the stored session shows afterwards has every fact exactly once:
 * in the summary or verbatim, never in both, never in neither.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

const FACT = /FACT-\d+/g;

/** The fake model: a summary request is answered with every fact in its input, anything else with "ok". */
function summarisingModel(request: FakeLlmRequest) {
  const last = messageText(request.messages.at(-1));
  if (last.includes("Summarise this conversation")) {
    const facts = [...new Set(last.match(FACT) ?? [])];
    return { text: `Known facts: ${facts.join(" ")}` };
  }
  return { text: "ok" };
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("compaction", () => {
  it("keeps every fact across three compactions, none both summarised and verbatim", async () => {
    const llm = await startFakeLlm();
    llm.setDefault(summarisingModel);
    // A 2,000-token window compresses above ~1,500 estimated tokens: every few messages here.
    harness = await startHarness({ llm, env: { HERALD_CONTEXT_TOKENS: "2000" } });
    const h = harness;
    let sessionId: string | undefined;
    const sent: string[] = [];
    for (let i = 1; i <= 24; i++) {
      const fact = `FACT-${i}`;
      sent.push(fact);
      const reply = await chat(h, `Remember ${fact}. ${"padding ".repeat(120)}`, { sessionId });
      expect(reply.status).toBe(200);
      sessionId ??= reply.sessionId ?? undefined;
    }
    expect(sessionId).toBeDefined();

    const summaries = llm.requests.filter((r) =>
      messageText(r.messages.at(-1)).includes("Summarise this conversation"),
    );
    expect(summaries.length).toBeGreaterThanOrEqual(3);

    // The API's session id names the chat; the stored session is that chat's one session.
    const [session] = h.state.sessions.list({ keyPrefix: `api:dm:${sessionId}`, limit: 2 });
    expect(session).toBeDefined();
    const view = h.state.sessions.load(session!.id);
    const summary = view.find(
      (m) => m.message.role === "system" && String(m.message.content).includes("Known facts"),
    );
    expect(summary).toBeDefined();
    const summarised = new Set(String(summary!.message.content).match(FACT) ?? []);
    const verbatim = new Set(
      view.filter((m) => m !== summary).flatMap((m) => String(m.message.content ?? "").match(FACT) ?? []),
    );
    // Each fact once: the summary and the verbatim messages share none, and together hold all.
    expect([...summarised].filter((f) => verbatim.has(f))).toEqual([]);
    expect(new Set([...summarised, ...verbatim])).toEqual(new Set(sent));
    // The earliest facts went through more than one compaction and are still there.
    expect(summarised.has("FACT-1")).toBe(true);
  });
});
