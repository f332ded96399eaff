/**
 * Lean requests through the whole gateway (API server, runner, agent loop, the sandbox backend) with
 * every toolset on: terminal, files, web, voice, vision, send_message, clarify, todo, the MCP tools of
 * server-everything and a plugin. A first request carries only the eager schemas and lists the rest;
 * `load_tools` (or a call to a tool not loaded yet) adds their schemas for the rest of the session, and
 * the model calls them end to end; consecutive requests of a session share their prefix byte for byte.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";

let harness: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ALL_TOOLSETS = "core,cron,memory,skills,terminal,files,web,voice,vision,messaging";

/** A gateway with every toolset on, its MCP server connected before it returns. */
async function startAll(env: Record<string, string> = {}): Promise<Harness> {
  const plugins = mkdtempSync(join(tmpdir(), "herald-lean-plugins-"));
  dirs.push(plugins);
  mkdirSync(join(plugins, "notes"));
  cpSync(join(import.meta.dirname, "../../examples/plugins/notes"), join(plugins, "notes"), {
    recursive: true,
  });
  const node = JSON.stringify(process.execPath);
  harness = await startHarness({
    configYaml: `mcp_servers:\n  everything:\n    command: ${node}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
    env: {
      HERALD_TOOLSETS: ALL_TOOLSETS,
      HERALD_EXEC_DANGEROUS_COMMANDS: "off",
      HERALD_WEB_SEARCH_PROVIDER: "searxng",
      HERALD_WEB_SEARCH_URL: "http://127.0.0.1:9/search",
      HERALD_TTS_URL: "http://127.0.0.1:9/v1",
      HERALD_TTS_MODEL: "tts-1",
      HERALD_TTS_VOICE: "alloy",
      HERALD_VISION_URL: "http://127.0.0.1:9/v1",
      HERALD_VISION_MODEL: "vision-model",
      HERALD_PLUGINS_DIR: plugins,
      ...env,
    },
  });
  const mcp = harness.gateway.mcp;
  if (!mcp) throw new Error("the gateway has no MCP manager");
  await expect.poll(() => mcp.status().every((s) => s.state === "connected"), { timeout: 20_000 }).toBe(true);
  return harness;
}

const toolNames = (request: FakeLlmRequest | undefined) => (request?.tools ?? []).map((t) => t.function.name);
const systemText = (request: FakeLlmRequest | undefined) =>
  messageText(request?.messages.find((m) => m.role === "system"));
const toolResults = (request: FakeLlmRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => messageText(m));

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

describe("lean requests", () => {
  it("sends a small first request that lists the lazy toolsets; load_tools adds them and terminal runs in the sandbox", async () => {
    const h = await startAll();
    h.llm.script({ text: "Hello." });
    const first = await chat(h, "hi", { sessionId: "lean-1" });
    expect(first.text).toBe("Hello.");

    const body = h.llm.bodies[0]!;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(12 * 1024);
    const request = h.llm.requests[0];
    const names = toolNames(request);
    expect(names).toEqual(
      expect.arrayContaining(["session_search", "clarify", "todo", "memory", "skill_view", "load_tools"]),
    );
    for (const lazy of ["terminal", "read_file", "web_search", "text_to_speech", "vision_analyze"])
      expect(names).not.toContain(lazy);
    expect(names).not.toContain("send_message");
    expect(names).not.toContain("mcp_everything_echo");
    expect(names).not.toContain("note_add");
    const system = systemText(request);
    for (const line of [
      "- terminal (process, terminal)",
      "- files (patch, read_file, search_files, write_file)",
      "- web (web_extract, web_search)",
      "- voice (text_to_speech)",
      "- vision (vision_analyze)",
      "- messaging (send_message)",
      "- cron (cronjob)",
      "- plugins (note_add)",
    ])
      expect(system).toContain(line);
    expect(system).toMatch(
      /^- mcp_everything \(.*mcp_everything_echo.*\): tools of the MCP server everything$/m,
    );

    // The model loads terminal and runs a command in the sandbox; the schemas stay for the session.
    h.llm.script(
      { toolCalls: [{ name: "load_tools", arguments: { toolsets: ["terminal"] } }] },
      { toolCalls: [{ name: "terminal", arguments: { command: "echo lean > f.txt && cat f.txt && pwd" } }] },
      (req) => ({ text: `ran: ${toolResults(req).at(-1)}` }),
    );
    const ran = await chat(h, "run it", { sessionId: "lean-1" });
    expect(ran.text).toContain("lean");
    expect(ran.text).toContain("/workspace");
    const [loading, afterLoad] = h.llm.requests.slice(1, 3);
    expect(toolNames(loading)).not.toContain("terminal");
    expect(toolResults(afterLoad)[0]).toBe(
      "terminal: loaded (terminal, process); call them from your next step on.",
    );
    expect(toolNames(afterLoad).slice(-2)).toEqual(["terminal", "process"]);

    // The next turn carries them from the start, after the same tools as before: the prefix holds.
    h.llm.script({ text: "Still here." });
    await chat(h, "and now?", { sessionId: "lean-1" });
    const next = h.llm.requests.at(-1);
    expect(toolNames(next)).toEqual(toolNames(afterLoad));
    expect(systemText(next)).toBe(system);
    const [a, b] = h.llm.bodies.slice(-2) as [string, string];
    expect(sharedPrefix(a, b) / b.length).toBeGreaterThanOrEqual(0.95);

    // Nothing but the history says what is loaded: after a restart the session sends the same prefix
    // (the MCP server's tools come from its cached list; it starts on its first call).
    await h.restart();
    await expect
      .poll(() => h.gateway.mcp?.status().every((s) => s.state === "idle" || s.state === "connected"), {
        timeout: 20_000,
      })
      .toBe(true);
    h.llm.script({ text: "Back." });
    await chat(h, "still there?", { sessionId: "lean-1" });
    expect(toolNames(h.llm.requests.at(-1))).toEqual(toolNames(afterLoad));
    const [c, d] = h.llm.bodies.slice(-2) as [string, string];
    expect(sharedPrefix(c, d) / d.length).toBeGreaterThanOrEqual(0.95);
  });

  it("runs a call to a tool not loaded yet and loads its toolset; an unknown toolset is named as such", async () => {
    const h = await startAll();
    h.llm.script(
      { toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "straight away" } }] },
      { toolCalls: [{ name: "load_tools", arguments: { toolsets: ["gardening"] } }] },
      (req) => ({ text: toolResults(req).join(" | ") }),
    );
    const reply = await chat(h, "echo something", { sessionId: "lean-2" });
    expect(reply.text).toMatch(
      /^Echo: straight away \| error: gardening: no such toolset here\. You can load: cron, files, /,
    );
    const [, second] = h.llm.requests;
    expect(toolNames(second)).toContain("mcp_everything_echo");
    expect(toolNames(second)).not.toContain("terminal");
  });

  it("keeps two consecutive turns' requests on a shared prefix of at least 95 %", async () => {
    const h = await startAll();
    for (const text of ["first question", "second question", "third question"]) {
      h.llm.script({ text: `An answer of a usual length to the ${text}, a few sentences long. `.repeat(3) });
      await chat(h, text, { sessionId: "lean-3" });
    }
    const bodies = h.llm.bodies;
    for (let i = 1; i < bodies.length; i++)
      expect(sharedPrefix(bodies[i - 1]!, bodies[i]!) / bodies[i]!.length).toBeGreaterThanOrEqual(0.95);
  });

  it("with tools.lazy off sends every schema, larger than 12 KB, and no load_tools", async () => {
    const h = await startAll({ HERALD_TOOLS_LAZY: "false" });
    h.llm.script({ text: "Hello." });
    await chat(h, "hi", { sessionId: "lean-4" });
    const names = toolNames(h.llm.requests[0]);
    expect(names).toEqual(
      expect.arrayContaining([
        "terminal",
        "read_file",
        "web_search",
        "text_to_speech",
        "vision_analyze",
        "send_message",
        "mcp_everything_echo",
        "note_add",
      ]),
    );
    expect(names).not.toContain("load_tools");
    expect(systemText(h.llm.requests[0])).not.toContain("load_tools");
    expect(Buffer.byteLength(h.llm.bodies[0]!)).toBeGreaterThan(12 * 1024);
  });

  it("takes tools.eager_for per platform and chat type", async () => {
    const yaml = "tools:\n  eager_for:\n    api: [core, terminal]\n";
    harness = await startHarness({ configYaml: yaml, env: { HERALD_TOOLSETS: ALL_TOOLSETS } });
    harness.llm.script({ text: "ok" });
    await chat(harness, "hi", { sessionId: "lean-5" });
    const names = toolNames(harness.llm.requests[0]);
    expect(names).toEqual(expect.arrayContaining(["session_search", "terminal", "process", "load_tools"]));
    expect(names).not.toContain("memory");
    expect(systemText(harness.llm.requests[0])).toContain("- memory (memory)");
  });
});
