/**
 * `herald chat --url` against a real gateway process (`herald gateway`, its API server with a key):
 * the same UI in tmux, its turns run by the gateway, streamed back with tool progress and buttons
 * through the API server's extensions. Also: the gateway never loads the UI's libraries, a wrong key
 * or nothing listening is said plainly, and `--plain` and pipes keep the line mode.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { freePort } from "../helpers/net.js";
import { CLI, ensureBuilt, type Pane, startPane, stopTmux } from "../helpers/tmux.js";

const KEY = "tui-test-key-0123456789";

let llm: FakeLlm;
let gatewayHome: string;
let clientHome: string;
let gateway: ChildProcess;
let url: string;
let loaded = "";
let pane: Pane | undefined;

beforeAll(async () => {
  await ensureBuilt();
  llm = await startFakeLlm();
  gatewayHome = mkdtempSync(join(tmpdir(), "herald-tui-gw-"));
  clientHome = mkdtempSync(join(tmpdir(), "herald-tui-client-"));
  // Names every package the gateway resolves, to show it never loads the UI's.
  const hook = join(gatewayHome, "resolve-hook.mjs");
  writeFileSync(
    hook,
    `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "export async function resolve(s, c, next) { if (!s.startsWith('.') && !s.startsWith('node:') && !s.startsWith('file:')) process.stderr.write('resolve:' + s + '\\\\n'); return next(s, c); }"
));`,
  );
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  gateway = spawn(process.execPath, ["--import", hook, CLI, "gateway"], {
    env: {
      PATH: process.env["PATH"],
      HOME: process.env["HOME"],
      HERALD_HOME: gatewayHome,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "k",
      HERALD_MODEL: "fake-model",
      HERALD_EXEC_BACKEND: "local",
      API_SERVER_PORT: String(port),
      API_SERVER_KEY: KEY,
      HERALD_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  gateway.stderr?.on("data", (d: Buffer) => {
    loaded += d.toString();
  });
  for (let waited = 0; (await fetch(`${url}/health`).catch(() => undefined))?.status !== 200; waited += 100) {
    if (waited > 30_000) throw new Error(`the gateway did not answer at ${url}:\n${loaded}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 180_000);

afterAll(async () => {
  stopTmux();
  gateway?.kill("SIGTERM");
  await new Promise((r) => gateway?.once("exit", r));
  await llm.close();
  rmSync(gatewayHome, { recursive: true, force: true });
  rmSync(clientHome, { recursive: true, force: true });
});
afterEach(() => {
  pane?.kill();
  pane = undefined;
});

/** `herald chat --url` in a terminal; `env` over the client's (its key, its HERALD_HOME). */
async function open(args: string[] = [], env: Record<string, string> = {}) {
  pane = startPane([CLI, "chat", "--url", url, ...args], {
    HERALD_HOME: clientHome,
    API_SERVER_KEY: KEY,
    ...env,
  });
  if (!args.includes("--plain")) await pane.waitFor("● ready", 20_000);
  return pane;
}

function say(p: Pane, text: string): void {
  p.type(text);
  p.keys("Enter");
}

describe("herald chat --url, against a running gateway", () => {
  it("streams replies in place and shows tool calls with their results", async () => {
    const p = await open(["--session", "remote-a"]);
    expect(p.capture()).toContain(`api:remote-a @ ${url}`);
    llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo remote-tool-7" } }] },
      (req) => ({
        text: `Part one, ${messageText(req.messages.at(-1)).includes("remote-tool-7") ? "with" : "without"} the output.\n\nPart two.`,
        pieces: 4,
        chunkDelayMs: 400,
      }),
    );
    say(p, "run the remote tool");
    const partial = await p.waitFor("Part one, with the output.");
    expect(partial).toMatch(/▸ \$ echo remote-tool-7 · exit 0 · \d+ ms/);
    expect(partial).not.toContain("Part two.");
    const done = await p.waitFor((s) => s.includes("Part two.") && s.includes("● ready"));
    expect(done.split("Part one").length).toBe(2);
    // The status line has the session's tokens from the gateway.
    expect(done).toMatch(/fake-model · [\d.]+k? tok/);
  });

  it("answers an approval with the keys, and Ctrl+C stops a slow turn", async () => {
    const p = await open(["--session", "remote-b"]);
    llm.script(
      {
        toolCalls: [
          { name: "terminal", arguments: { command: "chattr -i nothing 2>/dev/null; echo remote-approved" } },
        ],
      },
      (req) => ({
        text: `tool said: ${messageText(req.messages.at(-1)).split("\n").slice(0, 3).join(" / ")}`,
      }),
    );
    say(p, "tidy remotely");
    await p.waitFor((s) => /› 1\. .*Approve/.test(s));
    // Buttons came as data: the text fallback is not in the reply.
    expect(p.capture()).not.toContain("Reply with your choice");
    p.keys("3");
    const denied = await p.waitFor((s) => s.includes("tool said:") && s.includes("● ready"));
    expect(denied).toMatch(/→ .*Deny/);
    expect(denied).toContain("denied");

    llm.script({ text: "slowly ".repeat(80), pieces: 40, chunkDelayMs: 300 });
    say(p, "take your time");
    await p.waitFor("slowly slowly");
    p.keys("C-c");
    await p.waitFor((s) => s.includes("⏹ stopped") && s.includes("● ready"));
    await expect.poll(() => llm.closedEarly.length).toBeGreaterThan(0);
  });

  it("/resume reopens a session of the chat on the gateway", async () => {
    const p = await open(["--session", "remote-c"]);
    llm.script({ text: "Noted: alpha." });
    say(p, "remember alpha");
    await p.waitFor("Noted: alpha.");
    say(p, "/new");
    await p.waitFor("New session started");
    llm.script({ text: "Noted: beta." });
    say(p, "remember beta");
    await p.waitFor("Noted: beta.");
    say(p, "/resume");
    await p.waitFor((s) => /› 2\. remember alpha/.test(s));
    p.keys("Enter");
    // The notice can paint a frame before the reopened transcript does: wait for both.
    const reopened = await p.waitFor(
      (s) => s.includes("Resumed session") && s.includes("remember alpha") && !s.includes("remember beta"),
    );
    expect(reopened).not.toContain("remember beta");
  });

  it("the gateway never loaded the UI's libraries", () => {
    expect(loaded).toContain("resolve:commander");
    expect(loaded).not.toMatch(/resolve:(ink|react|lowlight)\b/);
  });

  it("says what is wrong when the key is wrong or nothing listens", async () => {
    const p = await open(["--plain"], { API_SERVER_KEY: "wrong" });
    await p.waitFor("[exited 1]");
    expect(p.capture().replaceAll("\n", "")).toContain("refused the one set here: set API_SERVER_KEY");
    p.kill();
    pane = startPane([CLI, "chat", "--url", `http://127.0.0.1:${await freePort()}`], {
      HERALD_HOME: clientHome,
    });
    await pane.waitFor("[exited 1]");
    expect(pane.capture().replaceAll("\n", "")).toMatch(
      /Nothing answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
  });

  it("keeps the line mode in a pipe: the answer comes before it ends", async () => {
    llm.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "alpha" } }] },
      { text: "Piped answer." },
    );
    const child = spawn(process.execPath, [CLI, "chat", "--url", url, "--session", "remote-d"], {
      env: { PATH: process.env["PATH"], HERALD_HOME: clientHome, API_SERVER_KEY: KEY },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stdin.end("what about alpha?\n");
    const code = await new Promise((r) => child.once("exit", r));
    expect(code).toBe(0);
    expect(out).toContain("Herald — type a message");
    expect(out).toContain("  ⚙️ session_search");
    expect(out).toContain("Piped answer.");
    expect(out).not.toContain("\x1b[");
  });
});
