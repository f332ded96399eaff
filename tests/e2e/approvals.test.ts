/**
 * Approvals of dangerous commands, through the whole gateway (API server, runner, agent loop, the
 * bubblewrap sandbox): a dangerous command waits for the user; /approve runs it once, itself, and the
 * model carries on with its output as the call's result; /deny, /stop and the timeout run nothing and
 * the agent is told in that call's result; a restart while waiting runs nothing and keeps the request.
 * The command writes a proof file into the workspace, so "ran" and "did not run" are seen on disk.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

// `chattr` is on the rule table; in the sandbox it changes nothing.
const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The fake model: asked anything, it wants to run COMMAND; given a tool result, it reports it. */
function wantsCommand(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (messageText(last).includes("denied it")) return { text: "understood, not running it" };
  if (messageText(last).includes("nobody answered")) return { text: "the request lapsed" };
  if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
  return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
}

/** One message in session `sessionId`; the reply's text (every call here expects a 200). */
async function say(h: Harness, text: string, sessionId: string): Promise<string> {
  const reply = await chat(h, text, { sessionId });
  expect(reply.status).toBe(200);
  return reply.text;
}

const proof = (h: Harness, sessionId: string) =>
  join(h.homeDir, "workspaces", workspaceDirName(`api:dm:${sessionId}`), "proof.txt");

async function start(env: Record<string, string> = {}): Promise<Harness> {
  harness = await startHarness({ env });
  harness.llm.setDefault(wantsCommand);
  return harness;
}

describe("approvals", () => {
  it("asks before a dangerous command; /approve runs it once; the same command later asks again", async () => {
    const h = await start();
    const asked = await say(h, "tidy the attributes", "ap-1");
    expect(asked).toContain("needs your approval");
    expect(asked).toContain(COMMAND);
    expect(asked).toContain("/approve");
    expect(existsSync(proof(h, "ap-1"))).toBe(false);

    const ran = await say(h, "/approve", "ap-1");
    expect(ran).toContain("exit code 0");
    expect(ran.match(/approved-run/g)).toHaveLength(1);
    // The model was not asked to run it again: its next request held the call's real result.
    const next = h.llm.requests.at(-1)!.messages;
    expect(next.at(-1)).toMatchObject({ role: "tool" });
    expect(messageText(next.at(-1))).toContain("approved-run");
    expect(JSON.stringify(next)).not.toContain("Run it now");

    const again = await say(h, "do it again", "ap-1");
    expect(again).toContain("needs your approval");
    expect(await say(h, "/approve", "ap-1")).toMatch(/approved-run\napproved-run/);
  });

  it("/approve always lets commands of that rule through for the rest of the session", async () => {
    const h = await start();
    await say(h, "tidy", "ap-2");
    await say(h, "/approve always", "ap-2");
    const next = await say(h, "tidy again", "ap-2");
    expect(next).toContain("exit code 0");
    expect(next).not.toContain("needs your approval");
  });

  it("/deny runs nothing and the agent is told", async () => {
    const h = await start();
    await say(h, "tidy", "ap-3");
    expect(await say(h, "/deny", "ap-3")).toBe("understood, not running it");
    const told = h.llm.requests.at(-1)!.messages.at(-1);
    expect(told?.role).toBe("tool");
    expect(messageText(told)).toContain("not run: the user denied it");
    expect(await say(h, "/approve", "ap-3")).toBe("Nothing is waiting for your approval.");
    expect(existsSync(proof(h, "ap-3"))).toBe(false);
  });

  it("/stop during the wait ends the request", async () => {
    const h = await start();
    await say(h, "tidy", "ap-4");
    expect(await say(h, "/stop", "ap-4")).toBe("⏹ Stopped.");
    expect(await say(h, "/approve", "ap-4")).toBe("Nothing is waiting for your approval.");
    expect(existsSync(proof(h, "ap-4"))).toBe(false);
  });

  it("a restart while waiting runs nothing and keeps the request", async () => {
    const h = await start();
    await say(h, "tidy", "ap-5");
    await h.restart();
    h.llm.setDefault(wantsCommand);
    expect(existsSync(proof(h, "ap-5"))).toBe(false);
    expect(await say(h, "/approve", "ap-5")).toContain("approved-run");
  });

  it("a request nobody answers lapses: nothing runs, and the agent is told", async () => {
    const h = await start({ HERALD_EXEC_APPROVAL_TIMEOUT_S: "1" });
    await say(h, "tidy", "ap-6");
    await expect
      .poll(() => h.llm.requests.some((r) => messageText(r.messages.at(-1)).includes("nobody answered")), {
        timeout: 10_000,
      })
      .toBe(true);
    expect(await say(h, "/approve", "ap-6")).toBe("Nothing is waiting for your approval.");
    expect(existsSync(proof(h, "ap-6"))).toBe(false);
  });
});
