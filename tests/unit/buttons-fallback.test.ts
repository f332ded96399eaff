/** The text form of buttons, for platforms without them. */
import { describe, expect, it } from "vitest";
import { approvalButtons } from "../../agent/exec/approvals/index.js";
import { buttonsFallback, withButtonsFallback } from "../../core/buttons.js";

describe("buttons fallback", () => {
  it("command buttons become what to reply, once per command", () => {
    expect(buttonsFallback(approvalButtons("3f2a1b2c-0000-7000-8000-000000000000"))).toBe(
      "Reply /approve or /deny.",
    );
  });

  it("commands the text already names are not repeated", () => {
    const buttons = [[{ label: "Deny", data: "/deny" }]];
    expect(buttonsFallback(buttons, "Reply /deny to refuse.")).toBe("");
    expect(withButtonsFallback({ text: "Reply /deny to refuse.", buttons })).toEqual({
      text: "Reply /deny to refuse.",
    });
  });

  it("choices are numbered under the text, and the buttons dropped", () => {
    const message = withButtonsFallback({
      text: "Which colour?",
      buttons: [[{ label: "Red", data: "Red" }], [{ label: "Blue", data: "Blue" }]],
    });
    expect(message).toEqual({ text: "Which colour?\n\n1. Red\n2. Blue\n(Reply with your choice.)" });
  });

  it("a message without buttons is unchanged", () => {
    const message = { text: "hi" };
    expect(withButtonsFallback(message)).toBe(message);
  });
});
