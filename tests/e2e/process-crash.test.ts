/**
 * A real `herald gateway` process killed with SIGKILL mid-turn: after restart the turn runs again and
 * the session ends up with exactly one answer; stopped cleanly mid-turn, again and again, the turn still
 * runs (only crashes count towards failing a turn that crashes the process); bad config exits with the named error; a plugin's
 * unhandled rejection is logged and survived (fatal again with `--unhandled-rejections=strict`).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteState } from "../../sessions/sqlite-state.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { freePort } from "../helpers/net.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");
// One process (no tsx wrapper in between), so SIGKILL reaches the gateway itself.
const nodeArgs = ["--import", "tsx", cli, "gateway"];

let llm: FakeLlm | undefined;
let child: ChildProcess | undefined;
let home: string | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  await llm?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  child = undefined;
  llm = undefined;
});

/** A gateway on `home` with the fake model, its API on `port`. */
function gatewayEnv(home: string, model: FakeLlm, port: string): Record<string, string> {
  return {
    HERALD_HOME: home,
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "k",
    HERALD_MODEL: "fake-model",
    API_SERVER_PORT: port,
  };
}

async function startGatewayProcess(
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [...nodeFlags, ...nodeArgs], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const url = `http://127.0.0.1:${env["API_SERVER_PORT"]}/health`;
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`gateway exited early with ${proc.exitCode}`);
    try {
      if ((await fetch(url)).ok) return proc;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("gateway did not become ready");
}

describe("gateway process", () => {
  it("killed with SIGKILL mid-turn, answers exactly once after restart", async () => {
    llm = await startFakeLlm();
    home = mkdtempSync(join(tmpdir(), "herald-crash-"));
    const port = String(await freePort());
    const env = { ...gatewayEnv(home, llm, port), HERALD_LOG_LEVEL: "silent" };
    llm.script({ text: "never delivered", delayMs: 60_000 });
    child = await startGatewayProcess(env);
    const request = fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-herald-session-id": "crash-1" },
      body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: "what is 6 x 7?" }] }),
    }).catch((err: unknown) => err);
    await llm.waitForRequests(1);
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    expect(await request).toBeInstanceOf(Error);

    llm.script({ text: "42" });
    child = await startGatewayProcess(env);
    await llm.waitForRequests(2);
    // The re-run turn is committed to the session once.
    let answers: string[] = [];
    for (let i = 0; i < 100 && answers.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const state = SqliteState.open(join(home, "state.db"));
      const session = state.sessions.list({ keyPrefix: "api:dm:crash-1" })[0];
      answers = session
        ? state.sessions
            .load(session.id)
            .filter((m) => m.message.role === "assistant")
            .map((m) => String(m.message.content))
        : [];
      state.close();
    }
    expect(answers).toEqual(["42"]);
    // The question itself is in the session once.
    expect(llm.requests[1]!.messages.filter((m) => m.content === "what is 6 x 7?")).toHaveLength(1);
    // A continued conversation sees that answer, and nothing runs a third time.
    const next = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-herald-session-id": "crash-1" },
      body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: "thanks" }] }),
    });
    expect(next.status).toBe(200);
    expect(llm.requests).toHaveLength(3);
    expect(llm.requests[2]!.messages.map((m) => m.content)).toContain("42");
  }, 60_000);

  it("stopped cleanly mid-turn twice, still runs the turn after the next start (a stop is not a crash)", async () => {
    llm = await startFakeLlm();
    home = mkdtempSync(join(tmpdir(), "herald-stop-"));
    const port = String(await freePort());
    const env = { ...gatewayEnv(home, llm, port), HERALD_LOG_LEVEL: "silent" };
    const ask = () =>
      fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-herald-session-id": "stop-1" },
        body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: "what is 6 x 7?" }] }),
      }).catch((err: unknown) => err);
    llm.script({ text: "never delivered", delayMs: 60_000 }, { text: "never delivered", delayMs: 60_000 });
    child = await startGatewayProcess(env);
    const request = ask();
    for (const seen of [1, 2]) {
      await llm.waitForRequests(seen);
      const exit = new Promise<number | null>((r) => child!.once("exit", (code) => r(code)));
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
      if (seen === 1) child = await startGatewayProcess(env);
    }
    await request;

    llm.script({ text: "42" });
    child = await startGatewayProcess(env);
    await llm.waitForRequests(3);
    let answers: string[] = [];
    for (let i = 0; i < 100 && answers.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const state = SqliteState.open(join(home, "state.db"));
      const session = state.sessions.list({ keyPrefix: "api:dm:stop-1" })[0];
      answers = session
        ? state.sessions
            .load(session.id)
            .filter((m) => m.message.role === "assistant")
            .map((m) => String(m.message.content))
        : [];
      state.close();
    }
    expect(answers).toEqual(["42"]);
  }, 60_000);

  it("logs a plugin's unhandled rejection and keeps answering; strict mode makes it fatal again", async () => {
    llm = await startFakeLlm();
    home = mkdtempSync(join(tmpdir(), "herald-guard-"));
    const plugin = join(home, "plugins", "leaky");
    mkdirSync(plugin, { recursive: true });
    writeFileSync(join(plugin, "plugin.json"), JSON.stringify({ name: "leaky", version: "1.0.0" }));
    writeFileSync(
      join(plugin, "index.js"),
      `import { definePlugin, z } from "herald/plugin";
export default definePlugin({ tools: [{ name: "leaky_tool", description: "forgets a catch",
  parameters: z.object({}),
  execute: async () => {
    Promise.reject(new Error("the leaky plugin forgot a catch"));
    return "done";
  } }] });`,
    );
    const port = String(await freePort());
    const env = gatewayEnv(home, llm, port);
    const ask = async (content: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-herald-session-id": "guard-1" },
        body: JSON.stringify({ model: "herald", messages: [{ role: "user", content }] }),
      });
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      return body.choices[0]!.message.content;
    };
    const leak = () =>
      llm!.script({ toolCalls: [{ name: "leaky_tool", arguments: {} }] }, { text: "the tool ran" });

    child = await startGatewayProcess(env);
    leak();
    expect(await ask("run the leaky tool")).toBe("the tool ran");
    llm.script({ text: "still here" });
    expect(await ask("are you there?")).toBe("still here");
    expect(child.exitCode).toBeNull();
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain("herald_unhandled_rejections_total 1");
    const log = readFileSync(join(home, "logs", "herald.log"), "utf8");
    expect(log).toContain("Error: the leaky plugin forgot a catch");
    expect(log).toContain("Herald keeps running");
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));

    // An operator who prefers a supervisor's restart gets Node's fail-fast back.
    child = await startGatewayProcess(env, ["--unhandled-rejections=strict"]);
    const exited = new Promise<number | null>((r) => child!.once("exit", (code) => r(code)));
    leak();
    await ask("run the leaky tool").catch(() => undefined);
    expect(await exited).toBe(1);
    expect(readFileSync(join(home, "logs", "herald.log"), "utf8")).toContain(
      "uncaught exception; Herald exits",
    );
  }, 60_000);

  it("bad config exits with an error that names the key and the fix", () => {
    const result = spawnSync(process.execPath, nodeArgs, {
      env: {
        ...process.env,
        HERALD_HOME: mkdtempSync(join(tmpdir(), "herald-cfg-")),
        API_SERVER_PORT: "eighty",
      },
      encoding: "utf8",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("API_SERVER_PORT");
    expect(result.stderr).toMatch(/Fix: set API_SERVER_PORT=<number>/);
  }, 30_000);
});
