/**
 * `herald chat` as a user meets it: a real process, lines typed on stdin, replies on stdout, the same
 * state file as the gateway (a conversation continues in the next `herald chat`).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");

let llm: FakeLlm | undefined;
let home: string | undefined;
afterEach(async () => {
  await llm?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Runs `herald chat`, types `lines` one by one (each after the previous answer), returns stdout. */
async function chatSession(
  env: Record<string, string>,
  lines: string[],
  expectReplies: number,
): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", cli, "chat"], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  let replies = 0;
  const pending = [...lines];
  const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    // Each "> " prompt (the banner's, then one after every answer) asks for the next line.
    const prompts = out.split("\n> ").length - 1;
    while (replies < prompts && replies <= expectReplies) {
      replies++;
      const next = pending.shift();
      if (next !== undefined) child.stdin.write(`${next}\n`);
      else child.stdin.end();
    }
  });
  await done;
  return out;
}

describe("herald chat", () => {
  it("answers typed lines, shows tool progress, and continues the session next time", async () => {
    llm = await startFakeLlm();
    home = mkdtempSync(join(tmpdir(), "herald-chat-"));
    const env = {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "k",
      HERALD_MODEL: "fake-model",
      HERALD_LOG_LEVEL: "silent",
    };
    llm.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "lunch" } }] },
      { text: "Nothing about lunch yet." },
    );
    const first = await chatSession(env, ["what did we say about lunch?"], 1);
    expect(first).toContain("session_search");
    expect(first).toContain("Nothing about lunch yet.");

    llm.script((req) => ({
      text: `I see ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    const second = await chatSession(env, ["and now?"], 1);
    expect(second).toContain("I see 2 questions");
  }, 60_000);
});
