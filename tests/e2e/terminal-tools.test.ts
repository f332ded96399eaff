/**
 * The terminal tools through the whole gateway (API server, runner, agent loop, the default bubblewrap
 * sandbox): the scripted model runs commands and reads their output back, as a user's model would.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The model's last step: it answers with what the last tool returned. */
const echoToolResult = (request: FakeLlmRequest) => {
  const tool = [...request.messages].reverse().find((m) => m.role === "tool");
  return { text: `tool said: ${String(tool?.content ?? "")}` };
};

async function ask(
  h: Harness,
  text: string,
  sessionId?: string,
): Promise<{ reply: string; sessionId: string }> {
  const answer = await chat(h, text, { sessionId });
  expect(answer.status).toBe(200);
  return { reply: answer.text, sessionId: answer.sessionId ?? "" };
}

describe("terminal tools (sandbox backend)", () => {
  it("runs a command in the session's workspace; the system stays read-only and the network off", async () => {
    // The sandbox itself holds even with the dangerous-command check off.
    harness = await startHarness({ env: { HERALD_EXEC_DANGEROUS_COMMANDS: "off" } });
    harness.llm.script(
      {
        toolCalls: [
          {
            name: "terminal",
            arguments: {
              command:
                "echo made > note.txt && cat note.txt && pwd; touch /usr/evil 2>/dev/null || echo system-read-only; (exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null || echo no-network; exit 3",
            },
          },
        ],
      },
      echoToolResult,
    );
    const { reply } = await ask(harness, "make a note");
    expect(reply).toContain("exit code 3");
    expect(reply).toContain("made");
    expect(reply).toContain("/workspace");
    expect(reply).toContain("system-read-only");
    expect(reply).toContain("no-network");
  });

  it("starts a background process, waits for it, and reads its output; kill ends another", async () => {
    harness = await startHarness();
    harness.llm.script(
      {
        toolCalls: [
          { name: "terminal", arguments: { command: "sleep 0.3; echo finished-in-bg", background: true } },
        ],
      },
      (req) => {
        const started = String([...req.messages].reverse().find((m) => m.role === "tool")?.content ?? "");
        const id = /as (\S+)\./.exec(started)?.[1] ?? "missing";
        return { toolCalls: [{ name: "process", arguments: { action: "wait", id, timeout_s: 20 } }] };
      },
      (req) => {
        const waited = String([...req.messages].reverse().find((m) => m.role === "tool")?.content ?? "");
        const id = /^(\S+):/.exec(waited)?.[1] ?? "missing";
        return { toolCalls: [{ name: "process", arguments: { action: "log", id } }] };
      },
      echoToolResult,
    );
    const first = await ask(harness, "run it in the background");
    expect(first.reply).toContain("finished-in-bg");

    harness.llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "sleep 600", background: true } }] },
      (req) => {
        const started = String([...req.messages].reverse().find((m) => m.role === "tool")?.content ?? "");
        const id = /as (\S+)\./.exec(started)?.[1] ?? "missing";
        return { toolCalls: [{ name: "process", arguments: { action: "kill", id } }] };
      },
      echoToolResult,
    );
    const second = await ask(harness, "start a long one and stop it", first.sessionId);
    expect(second.reply).toMatch(/exited \((signal SIG(TERM|KILL)|code \d+)\)/);
  });

  it("with dangerous commands set to deny, refuses one without running any of it, and says why", async () => {
    harness = await startHarness({ env: { HERALD_EXEC_DANGEROUS_COMMANDS: "deny" } });
    harness.llm.script(
      {
        toolCalls: [
          { name: "terminal", arguments: { command: "touch ran.txt; sudo apt-get install -y cowsay" } },
        ],
      },
      { toolCalls: [{ name: "terminal", arguments: { command: "ls -a" } }] },
      (req) => ({
        text: req.messages
          .filter((m) => m.role === "tool")
          .map((m) => String(m.content ?? ""))
          .join("\n---\n"),
      }),
    );
    const { reply } = await ask(harness, "clean up the system");
    const [refused, listing] = reply.split("\n---\n");
    expect(refused).toMatch(/^error: refused without running it: .*rule privilege-escalation/);
    expect(listing).toContain("exit code 0");
    expect(listing).not.toContain("ran.txt");
  });

  it("kills a command at its timeout, with its children", async () => {
    harness = await startHarness();
    harness.llm.script(
      {
        toolCalls: [
          { name: "terminal", arguments: { command: "sleep 100 & sleep 100; echo never", timeout_s: 1 } },
        ],
      },
      echoToolResult,
    );
    const { reply } = await ask(harness, "hang");
    expect(reply).toContain("timed out");
    expect(reply).not.toContain("never");
  });
});
