/**
 * `clarify` where there are no buttons (the API server): the question ends the turn with its choices
 * numbered; the typed answer starts the next turn with the question in context.
 */
import { afterEach, describe, expect, it } from "vitest";
import { messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("clarify", () => {
  it("asks with numbered choices and ends the turn; the typed answer starts the next turn", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.script(
      {
        toolCalls: [
          { name: "clarify", arguments: { question: "Which format?", choices: ["PDF", "Markdown"] } },
        ],
      },
      (request) => ({ text: `writing it as ${messageText(request.messages.at(-1))}` }),
    );
    const asked = await chat(h, "write the report", { sessionId: "cl-1" });
    expect(asked.text).toBe("Which format?\n\n1. PDF\n2. Markdown\n(Reply with your choice.)");
    // The turn ended at the question: one model call, nothing after the tool.
    expect(h.llm.requests).toHaveLength(1);

    const answered = await chat(h, "Markdown", { sessionId: "cl-1" });
    expect(answered.text).toBe("writing it as Markdown");
    const messages = h.llm.requests.at(-1)!.messages;
    expect(messages.at(-2)).toMatchObject({ role: "assistant", content: "Which format?" });
  });

  it("a streamed answer gets the choices too, after the streamed question", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.script({
      toolCalls: [
        { name: "clarify", arguments: { question: "Which format?", choices: ["PDF", "Markdown"] } },
      ],
    });
    const res = await fetch(`${h.apiUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-herald-session-id": "cl-2" },
      body: JSON.stringify({
        model: "herald",
        stream: true,
        messages: [{ role: "user", content: "report" }],
      }),
    });
    const text = (await res.text())
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => (JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0])
      .map((choice) => choice?.delta.content ?? "")
      .join("");
    expect(text).toBe("Which format?\n\n1. PDF\n2. Markdown\n(Reply with your choice.)");
  });
});
