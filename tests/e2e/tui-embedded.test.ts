/**
 * `herald chat`'s full-screen UI as a user meets it: the built binary in a real terminal (tmux), its
 * turns run in its own process against the scripted model. Keys go in with `send-keys`; what the
 * screen shows comes back with `capture-pane`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { CLI, colourCodes, ensureBuilt, type Pane, startPane, stopTmux } from "../helpers/tmux.js";

let llm: FakeLlm;
let home: string;
let pane: Pane | undefined;

beforeAll(async () => {
  await ensureBuilt();
  llm = await startFakeLlm();
}, 180_000);
afterAll(async () => {
  stopTmux();
  await llm.close();
});
afterEach(() => {
  pane?.kill();
  pane = undefined;
  if (home) rmSync(home, { recursive: true, force: true });
});

/** `herald chat` (with `args`) in a fresh HERALD_HOME; resolves once the UI is ready for input. */
async function open(args: string[] = [], env: Record<string, string> = {}, size = { columns: 80, rows: 24 }) {
  home = mkdtempSync(join(tmpdir(), "herald-tui-"));
  pane = startPane(
    [CLI, "chat", ...args],
    {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "k",
      HERALD_MODEL: "fake-model",
      HERALD_EXEC_BACKEND: "local",
      ...env,
    },
    size,
  );
  if (!args.includes("--plain")) await pane.waitFor("● ready", 20_000);
  return pane;
}

/** Types a message and presses Enter. */
function say(p: Pane, text: string): void {
  p.type(text);
  p.keys("Enter");
}

const count = (screen: string, text: string) => screen.split(text).length - 1;

describe("herald chat, full screen, embedded", () => {
  it("streams a reply in place, then shows it whole once", async () => {
    const p = await open();
    expect(p.alternate()).toBe(true);
    llm.script({
      text: "First part of the answer.\n\nSecond part arrives later.\n\nThird and last part.",
      pieces: 6,
      chunkDelayMs: 500,
    });
    say(p, "tell me in parts");
    const partial = await p.waitFor("First part of the answer.");
    expect(partial).not.toContain("Third and last part.");
    expect(partial).toMatch(/working/);
    const done = await p.waitFor((s) => s.includes("Third and last part.") && s.includes("● ready"));
    for (const part of ["First part of the answer.", "Second part arrives later.", "Third and last part."])
      expect(count(done, part)).toBe(1);
    // The reply sits right under the message it answers, in order.
    const rows = done.split("\n");
    const asked = rows.findIndex((r) => r.includes("› tell me in parts"));
    expect(rows[asked + 1]).toContain("First part of the answer.");
    expect(rows.findIndex((r) => r.includes("Third and last"))).toBeGreaterThan(asked + 3);
  });

  it("shows a tool call's line and result, and its output with Ctrl+O", async () => {
    const p = await open();
    llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo tool-output-42" } }] },
      (req) => ({
        text: `The command said ${messageText(req.messages.at(-1)).includes("tool-output-42") ? "it" : "nothing"}.`,
      }),
    );
    say(p, "run it");
    const screen = await p.waitFor("The command said it.");
    expect(screen).toMatch(/▸ \$ echo tool-output-42 · exit 0 · \d+ ms/);
    expect(screen).not.toMatch(/^\s+tool-output-42$/m);
    p.keys("C-o");
    const open_ = await p.waitFor((s) => /^\s+tool-output-42$/m.test(s));
    expect(open_).toContain("▾ $ echo tool-output-42");
  });

  it("offers an approval's choices and answers with the keys", async () => {
    const p = await open();
    const command = "chattr -i nothing 2>/dev/null; echo approved-run";
    llm.script({ toolCalls: [{ name: "terminal", arguments: { command } }] }, (req) => ({
      text: `tool said: ${messageText(req.messages.at(-1)).split("\n").slice(0, 3).join(" / ")}`,
    }));
    say(p, "tidy the attributes");
    const asked = await p.waitFor("needs your approval");
    expect(asked).toMatch(/› 1\. .*Approve/);
    expect(asked).toMatch(/2\. .*Always/);
    expect(asked).toMatch(/3\. .*Deny/);
    p.keys("Down");
    await p.waitFor((s) => /› 2\. .*Always/.test(s));
    p.keys("Up", "Enter");
    const ran = await p.waitFor("tool said:");
    expect(ran).toContain("approved-run");
    expect(ran).toMatch(/→ .*Approve/);
    expect(ran).not.toMatch(/› 1\. .*Approve/);
  });

  it("Ctrl+C stops a slow turn; twice leaves", async () => {
    const p = await open();
    llm.script({ text: "slowly ".repeat(80), pieces: 40, chunkDelayMs: 300 });
    say(p, "take your time");
    await p.waitFor("slowly slowly");
    p.keys("C-c");
    const stopped = await p.waitFor((s) => s.includes("⏹ stopped") && s.includes("● ready"));
    expect(stopped).not.toContain("⏹ Stopped.");
    await expect.poll(() => llm.closedEarly.length).toBe(1);
    // The stopped turn asked nothing more of the model.
    const asked = llm.received();
    // Once the stop's own two seconds are over, one Ctrl+C with nothing running only warns.
    await new Promise((r) => setTimeout(r, 2200));
    p.keys("C-c");
    await p.waitFor("Press Ctrl+C again to quit");
    expect(p.exited().dead).toBe(false);
    p.keys("C-c");
    await expect.poll(() => p.exited().dead, { timeout: 10_000 }).toBe(true);
    expect(p.exited().status).toBe(0);
    expect(llm.received()).toBe(asked);
  });

  it("rewraps everything when the terminal narrows to 60 columns", async () => {
    const p = await open();
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    llm.script({ text: words });
    say(p, "a long answer please");
    const wide = await p.waitFor((s) => s.includes("word39") && s.includes("● ready"));
    const linesWith = (s: string) => s.split("\n").filter((l) => /word\d/.test(l));
    const reflowed = (s: string) => linesWith(s).join(" ").split(/\s+/).filter(Boolean).join(" ");
    expect(linesWith(wide).every((l) => l.length > 60)).toBe(false);
    expect(linesWith(wide).some((l) => l.length > 60)).toBe(true);
    p.resize(60, 24);
    // Until the program redraws, the terminal shows the old lines cut at 60 columns.
    const narrow = await p.waitFor(
      (s) => s.split("\n").every((l) => l.length <= 60) && reflowed(s) === words,
    );
    expect(linesWith(narrow).length).toBeGreaterThan(linesWith(wide).length);
    expect(reflowed(narrow)).toBe(words);
    expect(reflowed(wide)).toBe(words);
    expect(narrow).toContain(`${"─".repeat(58)}`);
    expect(narrow.split("\n").filter((l) => l.includes("● ready"))).toHaveLength(1);
  });

  it("/resume reopens an earlier session, its transcript and its history", async () => {
    const p = await open();
    llm.script({ text: "Noted: the first topic." });
    say(p, "remember the first topic");
    await p.waitFor("Noted: the first topic.");
    say(p, "/new");
    await p.waitFor("New session started");
    llm.script({ text: "Noted: the second topic." });
    say(p, "now the second topic");
    await p.waitFor("Noted: the second topic.");
    say(p, "/resume");
    const menu = await p.waitFor("Reopen which session?");
    // Newest first: the current session, then the first one, which is selected.
    expect(menu).toMatch(/1\. .*current/);
    expect(menu).toMatch(/› 2\. remember the first topic/);
    p.keys("Enter");
    const reopened = await p.waitFor("Resumed session");
    expect(reopened).toContain("remember the first topic");
    expect(reopened).not.toContain("second topic");
    llm.script((req) => ({ text: `history: ${req.messages.filter((m) => m.role === "user").length} asks` }));
    say(p, "and now?");
    await p.waitFor("history: 2 asks");
  });

  it("completes commands after / and files after @", async () => {
    const p = await open();
    p.type("/sess");
    await p.waitFor("› /sessions");
    p.keys("Tab");
    await p.waitFor((s) => s.includes("› /sessions") && !s.includes("list this chat's sessions"));
    p.keys("Escape");
    p.type("look at @tests/fak");
    await p.waitFor("tests/fakes/");
    p.keys("Tab");
    p.type("ll");
    await p.waitFor("tests/fakes/llm/");
  });

  it("draws no colour under NO_COLOR, and colour without it", async () => {
    const reply = "Some **bold** and `code`:\n\n```ts\nconst answer: number = 42;\n```";
    for (const [env, coloured] of [
      [{ NO_COLOR: "1" }, false],
      [{}, true],
    ] as const) {
      const p = await open([], env);
      llm.script({ text: reply });
      say(p, "style it");
      await p.waitFor((s) => s.includes("const answer") && s.includes("● ready"));
      const codes = colourCodes(p.capture({ escapes: true }));
      if (coloured) expect(codes.length).toBeGreaterThan(0);
      else expect(codes).toEqual([]);
      p.kill();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("keeps the line mode with --plain on a terminal", async () => {
    const p = await open(["--plain"]);
    await p.waitFor("Herald — type a message");
    say(p, "hello plain");
    await p.waitFor("echo: hello plain");
    expect(p.alternate()).toBe(false);
    expect(colourCodes(p.capture({ escapes: true }))).toEqual([]);
  });

  it("keeps the line mode in a pipe and answers before the input's end ends it", async () => {
    home = mkdtempSync(join(tmpdir(), "herald-tui-"));
    llm.script({ text: "Piped **answer**." });
    const child = spawn(process.execPath, [CLI, "chat"], {
      env: {
        PATH: process.env["PATH"],
        HERALD_HOME: home,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "k",
        HERALD_MODEL: "fake-model",
        HERALD_LOG_LEVEL: "silent",
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stdin.end("a question from a pipe\n");
    expect(await new Promise((r) => child.once("exit", r))).toBe(0);
    expect(out).toContain("Herald — type a message");
    expect(out).toContain("Piped **answer**.");
    expect(out).not.toContain("\x1b[");
  });
});
