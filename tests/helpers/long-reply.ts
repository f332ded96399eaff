/**
 * Long replies for the "splits a long answer into valid messages" tests of each platform: a Markdown
 * text with numbered code lines, and the checks every platform's chunks must pass.
 */
import { expect } from "vitest";
import { openFenceAtEnd } from "../../adapters/shared/split.js";

/** `lines` Python lines, `print("line <i>")  # xxx…` with `padding` x's, joined by newlines. */
export function numberedCode(lines: number, padding: number): string {
  return Array.from({ length: lines }, (_, i) => `print("line ${i}")  # ${"x".repeat(padding)}`).join("\n");
}

/** Prose repeated `proseRepeats` times, a Python block of `numberedCode(lines, padding)`, the prose again. */
export function longReply(options: { lines: number; padding: number; proseRepeats: number }): string {
  const code = numberedCode(options.lines, options.padding);
  const prose = "A sentence that carries on for a while. ".repeat(options.proseRepeats);
  return `${prose}\n\n\`\`\`python\n${code}\n\`\`\`\n\n${prose}`;
}

/**
 * Asserts that `chunks` are valid messages of a long reply: each at most `maxChars` long with every code
 * fence it opens closed, and each of the `lines` numbered code lines present exactly once overall.
 */
export function expectValidChunks(chunks: string[], options: { maxChars: number; lines: number }): void {
  for (const c of chunks) {
    expect(c.length).toBeLessThanOrEqual(options.maxChars);
    expect(openFenceAtEnd(c)).toBeUndefined();
  }
  const all = chunks.join("");
  for (let i = 0; i < options.lines; i++) expect(all.split(`print("line ${i}")`).length - 1).toBe(1);
}
