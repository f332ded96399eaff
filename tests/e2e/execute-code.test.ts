/**
 * `execute_code` through the whole gateway (API server, agent loop, the default bubblewrap sandbox):
 * a script that calls the agent's tools over the execution's Unix socket. Thirty file reads cost one
 * model step; a dangerous command from code is refused for approval and not run; a script that loops
 * forever is killed with the call it was waiting on; JavaScript scripts import `herald-tools`.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const lastToolResult = (request: FakeLlmRequest | undefined) =>
  String([...(request?.messages ?? [])].reverse().find((m) => m.role === "tool")?.content ?? "");

const runCode = (language: string, code: string, extra: Record<string, unknown> = {}) => ({
  toolCalls: [{ name: "execute_code", arguments: { language, code, ...extra } }],
});

describe("execute_code", () => {
  it("a script that writes and reads 30 files and returns a count is one model step", async () => {
    harness = await startHarness();
    const code = [
      "from herald_tools import terminal, read_file",
      'terminal(command="mkdir -p notes && for i in $(seq 1 30); do echo \\"line $i\\" > notes/$i.txt; done")',
      "count = 0",
      "for i in range(1, 31):",
      '    if f"line {i}" in read_file(path=f"notes/{i}.txt"):',
      "        count += 1",
      'print("checked", count)',
      "count",
    ].join("\n");
    harness.llm.script(runCode("python", code), { text: "There are 30 notes." });
    const answer = await chat(harness, "how many notes mention their number?");
    expect(answer.text).toBe("There are 30 notes.");
    // One request asked for the script, one read its result: none for the 31 calls in between.
    expect(harness.llm.requests).toHaveLength(2);
    const result = lastToolResult(harness.llm.requests[1]);
    expect(result).toMatch(/^exit code 0 after/);
    expect(result).toContain("stdout:\nchecked 30");
    expect(result).toContain("return value: 30");
    expect(result).toMatch(/tool calls: 31 \(terminal ×1, read_file ×30\)/);
    expect(result).toMatch(/\n2\. read_file ok \d+ ms/);
    expect(result).toContain("… and 11 more");
  });

  it("a dangerous command from code is refused for approval and does not run; directly it asks the user", async () => {
    harness = await startHarness();
    const code = [
      "try:",
      '    terminal(command="x=touch; $x marker.txt")',
      '    outcome = "ran"',
      "except ToolError as e:",
      "    outcome = str(e)",
      'terminal(command="ls")',
      "",
      "outcome",
    ].join("\n");
    harness.llm.script(runCode("python", code), (r) => ({ text: lastToolResult(r) }));
    const answer = await chat(harness, "touch a marker");
    expect(answer.text).toMatch(
      /return value: "terminal was not run: .* needs the user's approval, which a script cannot ask for/,
    );
    expect(answer.text).toMatch(/1\. terminal refused: needs the user's approval/);
    expect(answer.text).toMatch(/2\. terminal ok/);
    // The script went on without the marker.
    harness.llm.script({ toolCalls: [{ name: "terminal", arguments: { command: "ls -a" } }] }, (r) => ({
      text: lastToolResult(r),
    }));
    expect((await chat(harness, "list", { sessionId: answer.sessionId ?? "" })).text).not.toContain(
      "marker.txt",
    );
    // The same command as a direct call waits for the user.
    harness.llm.script({
      toolCalls: [{ name: "terminal", arguments: { command: "x=touch; $x marker.txt" } }],
    });
    const direct = await chat(harness, "touch it directly", { sessionId: answer.sessionId ?? "" });
    expect(direct.text).toMatch(/approv/i);
  });

  it("clarify is not callable from code, and the script says why", async () => {
    harness = await startHarness();
    const code = [
      "try:",
      '    call("clarify", question="which one?")',
      "except ToolError as e:",
      "    print(e)",
    ].join("\n");
    harness.llm.script(runCode("python", code), (r) => ({ text: lastToolResult(r) }));
    const answer = await chat(harness, "ask me");
    expect(answer.text).toContain("clarify asks the user, which a script cannot do");
  });

  it("a script that loops forever is killed at its timeout, with the call it waited on", async () => {
    harness = await startHarness();
    harness.llm.script(runCode("python", "while True:\n    pass", { timeout_s: 1 }), (r) => ({
      text: lastToolResult(r),
    }));
    const loop = await chat(harness, "spin");
    expect(loop.text).toMatch(/^timed out after .*: the script and its tool calls were killed/);
    harness.llm.script(
      runCode(
        "javascript",
        'import { terminal } from "herald-tools";\nawait terminal({ command: "sleep 60" });',
        {
          timeout_s: 1,
        },
      ),
      (r) => ({ text: lastToolResult(r) }),
    );
    const waiting = await chat(harness, "wait", { sessionId: loop.sessionId ?? "" });
    expect(waiting.text).toMatch(/^timed out after/);
    expect(waiting.text).toMatch(/1\. terminal refused: the execution ended while it ran/);
  });

  it("runs JavaScript modules: herald-tools imports, top-level await, the default export returned", async () => {
    harness = await startHarness();
    const code = [
      'import { write_file, read_file } from "herald-tools";',
      'await write_file({ path: "a.txt", content: "alpha\\n" });',
      'const text = await read_file({ path: "a.txt" });',
      'console.log("read", text.includes("alpha"));',
      'export default { ok: text.includes("alpha"), n: 2 };',
    ].join("\n");
    harness.llm.script(runCode("javascript", code), (r) => ({ text: lastToolResult(r) }));
    const answer = await chat(harness, "js");
    expect(answer.text).toMatch(/^exit code 0/);
    expect(answer.text).toContain("stdout:\nread true");
    expect(answer.text).toContain('return value: {"ok":true,"n":2}');
    expect(answer.text).toMatch(/tool calls: 2 \(write_file ×1, read_file ×1\)/);
  });
});
