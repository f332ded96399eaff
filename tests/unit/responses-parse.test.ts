import { describe, expect, it } from "vitest";
import { checkOutputs, InputProblem, turnOf } from "../../adapters/api/responses-parse.js";
import { CLIENT_PENDING } from "../../core/turn-steps.js";

const call = (id: string, name = "lookup", args = "{}") => ({
  type: "function_call",
  call_id: id,
  name,
  arguments: args,
});
const output = (id: string, text: string) => ({ type: "function_call_output", call_id: id, output: text });

/** The InputProblem `fn` throws. */
function problem(fn: () => unknown): InputProblem {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputProblem) return err;
    throw err;
  }
  throw new Error("no problem raised");
}

describe("turnOf", () => {
  it("reads earlier items as the session's start: messages, and call/output pairs as tool steps", () => {
    const turn = turnOf(
      [
        { role: "developer", content: "Be brief." },
        { role: "user", content: "Find x." },
        { type: "reasoning", id: "rs_1", summary: [] },
        { role: "assistant", content: "Looking." },
        call("c1"),
        output("c1", "x is 4"),
        { role: "assistant", content: [{ type: "output_text", text: "x is 4." }] },
        { role: "user", content: "Thanks." },
        { role: "user", content: [{ type: "input_text", text: "And y?" }] },
      ],
      false,
    );
    expect(turn.text).toBe("Thanks.\n\nAnd y?");
    expect(turn.outputs).toEqual([]);
    expect(turn.context).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Find x." },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }],
      },
      { role: "tool", content: "x is 4", tool_call_id: "c1" },
      { role: "assistant", content: "x is 4." },
    ]);
  });

  it("makes the calls before trailing outputs the step they complete, with the text said with them", () => {
    const turn = turnOf(
      [
        { role: "user", content: "Weather in A and B?" },
        { role: "assistant", content: "Checking both." },
        call("a", "weather", '{"city":"A"}'),
        call("b", "weather", '{"city":"B"}'),
        output("a", "sun"),
        output("b", "rain"),
      ],
      false,
    );
    expect(turn.text).toBe("");
    expect(turn.context).toEqual([{ role: "user", content: "Weather in A and B?" }]);
    expect(turn.outputs.map((o) => [o.callId, o.output])).toEqual([
      ["a", "sun"],
      ["b", "rain"],
    ]);
    expect(turn.step?.[0]).toMatchObject({ role: "assistant", content: "Checking both." });
    expect(turn.step?.slice(1)).toEqual([
      { role: "tool", content: CLIENT_PENDING, tool_call_id: "a" },
      { role: "tool", content: CLIENT_PENDING, tool_call_id: "b" },
    ]);
  });

  it("continuing, takes only new user messages and outputs", () => {
    expect(turnOf([output("a", "1"), { role: "user", content: "go on" }], true)).toMatchObject({
      text: "go on",
      outputs: [{ callId: "a", output: "1" }],
      context: [],
    });
    expect(
      problem(() =>
        turnOf(
          [
            { role: "assistant", content: "x" },
            { role: "user", content: "y" },
          ],
          true,
        ),
      ).param,
    ).toBe("input[0]");
  });

  it("names the field of what it refuses", () => {
    expect(problem(() => turnOf([{ type: "item_reference", id: "x" }], false)).param).toBe("input[0].type");
    expect(problem(() => turnOf([{ type: "function_call", name: "f", arguments: "{}" }], false)).param).toBe(
      "input[0].call_id",
    );
    expect(problem(() => turnOf([], false)).param).toBe("input");
  });
});

describe("checkOutputs", () => {
  const pending = {
    calls: [{ id: "a", type: "function" as const, function: { name: "weather", arguments: "{}" } }],
    step: [],
  };
  it("accepts exactly the waiting calls' outputs", () => {
    expect(() => checkOutputs(turnOf([output("a", "sun")], true), pending)).not.toThrow();
    expect(problem(() => checkOutputs(turnOf([output("b", "sun")], true), pending)).param).toBe(
      "input[0].call_id",
    );
    expect(problem(() => checkOutputs(turnOf("hi", true), pending)).message).toMatch(/'a' \(weather\)/);
    expect(problem(() => checkOutputs(turnOf([output("a", "x")], true), undefined)).message).toMatch(
      /made no function calls/,
    );
  });
});
