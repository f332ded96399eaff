/**
 * Plugins through a whole gateway (API server harness, scripted model): the sample plugin's tool,
 * command and hook; capabilities refused by the manifest and by the chat type's config; `ctx.fetch`
 * refused private addresses unless the owner names the plugin; broken plugins reported with file and
 * line while the gateway runs on; /reload-plugins picks up a new plugin.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { type EchoServer, startEchoServer } from "../fakes/web/echo.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
let echo: EchoServer | undefined;
afterEach(async () => {
  await harness?.stop();
  await echo?.close();
  harness = echo = undefined;
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sample = join(import.meta.dirname, "../../examples/plugins/notes");

/** A HERALD_HOME config that installs plugins before the gateway starts. */
function withPlugins(files: Record<string, string>): string {
  // The harness makes HERALD_HOME; plugins go to a folder of our own, named by config.
  const dir = join(mkdtemp(), "plugins");
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  cpSync(sample, join(dir, "notes"), { recursive: true });
  return dir;
}

const temps: string[] = [];
function mkdtemp(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-plugins-"));
  temps.push(dir);
  return dir;
}

const toolResults = (request: FakeLlmRequest) =>
  request.messages.filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));

describe("plugins", () => {
  it("runs the sample plugin's tool, command and hook through a chat", async () => {
    const dir = withPlugins({});
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir } });
    harness.llm.script(
      { toolCalls: [{ name: "note_add", arguments: { text: "deploy is on Friday" } }] },
      { text: "Noted." },
    );
    const reply = await chat(harness, "note that the deploy is on Friday");
    expect(reply.text).toBe("Noted.");
    // Listed up front, its schema sent once called (tools.lazy): the plugin's tool is the model's to use.
    expect(harness.llm.requests[1]!.tools?.map((t) => t.function.name)).toContain("note_add");
    expect(toolResults(harness.llm.requests[1]!)).toEqual(["Noted: deploy is on Friday"]);
    expect(readFileSync(join(harness.homeDir, "plugin-data/notes/notes.md"), "utf8")).toBe(
      "- deploy is on Friday\n",
    );

    const notes = await chat(harness, "/notes", { sessionId: reply.sessionId! });
    expect(notes.text).toBe("Notes:\n- deploy is on Friday");

    // The hook blocks a note that looks like a password; the model reads why.
    harness.llm.script(
      { toolCalls: [{ name: "note_add", arguments: { text: "the root password is hunter2" } }] },
      { text: "I won't note that." },
    );
    await chat(harness, "note the root password is hunter2", { sessionId: reply.sessionId! });
    expect(toolResults(harness.llm.requests.at(-1)!).at(-1)).toMatch(
      /^error: blocked by the notes plugin: notes must not hold passwords/,
    );
    expect(readFileSync(join(harness.homeDir, "plugin-data/notes/notes.md"), "utf8")).not.toContain(
      "hunter2",
    );

    const status = await chat(harness, "/status", { sessionId: reply.sessionId! });
    expect(status.text).toContain("Plugins: notes (loaded)");
  });

  it("gives a tool only the capabilities its manifest declares and the chat type allows", async () => {
    const dir = withPlugins({
      "probe/plugin.json": JSON.stringify({
        name: "probe",
        version: "0.1.0",
        capabilities: ["state", "send"],
      }),
      "probe/index.js": PROBE,
    });
    // DMs (the API server's chats) may have state but not send; exec is never declared.
    harness = await startHarness({
      env: { HERALD_PLUGINS_DIR: dir, HERALD_PLUGINS_DM_CAPABILITIES: "state,network" },
    });
    harness.llm.script(
      {
        toolCalls: [
          { name: "probe_caps", arguments: {} },
          { name: "probe_send", arguments: { text: "hello" } },
          { name: "probe_exec", arguments: {} },
        ],
      },
      { text: "done" },
    );
    await chat(harness, "probe");
    const [caps, send, exec] = toolResults(harness.llm.requests.at(-1)!);
    // afterToolCall rewrote what the model reads.
    expect(caps).toBe("granted: state (seen)");
    expect(send).toBe(
      "error: the probe plugin's probe_send failed: 'send' is not allowed for plugins in DMs on api (config plugins.capabilities.dm)",
    );
    expect(exec).toBe(
      "error: the probe plugin's probe_exec failed: the probe plugin does not declare 'exec' in its plugin.json",
    );
  });

  it("refuses a plugin's fetch to loopback by default, and lets through the plugin the owner names", async () => {
    echo = await startEchoServer();
    const fetcher = (name: string, tool: string) => ({
      [`${name}/plugin.json`]: JSON.stringify({ name, version: "1.0.0", capabilities: ["network"] }),
      [`${name}/index.js`]: `import { definePlugin, z } from "herald/plugin";
export default definePlugin({ tools: [{ name: "${tool}", description: "POST to a URL",
  parameters: z.object({ url: z.string() }),
  execute: async ({ url }, ctx) => {
    const res = await ctx.fetch(url, { method: "POST", headers: { "x-from": "${name}" }, body: "hello", signal: ctx.signal });
    return res.status + " " + (await res.text());
  } }] });`,
    });
    const dir = withPlugins({ ...fetcher("fetcher", "fetch_url"), ...fetcher("lan", "lan_post") });
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir, HERALD_PLUGINS_ALLOW_PRIVATE: "lan" } });
    const port = echo.port;
    harness.llm.script(
      {
        toolCalls: [
          { name: "fetch_url", arguments: { url: `${echo.url}/secret` } },
          { name: "fetch_url", arguments: { url: `http://[::1]:${port}/secret` } },
          { name: "fetch_url", arguments: { url: `http://localhost:${port}/secret` } },
        ],
      },
      { toolCalls: [{ name: "lan_post", arguments: { url: `${echo.url}/items` } }] },
      { text: "done" },
    );
    await chat(harness, "fetch them");
    const howTo =
      'plugins may reach only public addresses unless the owner allows it: add "fetcher" to ' +
      "plugins.allow_private in config.yaml (HERALD_PLUGINS_ALLOW_PRIVATE), or set web.allow_private to let " +
      "every plugin and web tool reach private addresses";
    const failed = "error: the fetcher plugin's fetch_url failed: refused";
    const [loopback, ipv6, localhost, lan] = toolResults(harness.llm.requests.at(-1)!);
    expect(loopback).toBe(
      `${failed} ${echo.url}/secret: 127.0.0.1 is a loopback (127.0.0.0/8) address; ${howTo}`,
    );
    expect(ipv6).toBe(`${failed} http://[::1]:${port}/secret: ::1 is a loopback (::1) address; ${howTo}`);
    expect(localhost).toMatch(
      new RegExp(
        `^${failed} http://localhost:${port}/secret: localhost resolves to (127\\.0\\.0\\.1|::1), a loopback`,
      ),
    );
    // Only the named plugin reached the server: one request, the whole of it.
    expect(JSON.parse(lan!.slice(4))).toMatchObject({ method: "POST", path: "/items", body: "hello" });
    expect(lan!.startsWith("200 ")).toBe(true);
    expect(echo.requests.map((r) => [r.method, r.path, r.headers["x-from"]])).toEqual([
      ["POST", "/items", "lan"],
    ]);
    expect(echo.connections()).toBe(1);
  });

  it("runs a plugin's command in the conversation's sandboxed workspace with exec, refusing dangerous ones", async () => {
    const dir = withPlugins({
      "probe/plugin.json": JSON.stringify({ name: "probe", version: "0.1.0", capabilities: ["exec"] }),
      "probe/index.js": PROBE,
    });
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir } });
    harness.llm.script(
      {
        toolCalls: [
          { name: "probe_exec", arguments: { command: "echo hi from $PWD" } },
          { name: "probe_exec", arguments: { command: "rm -rf /" } },
        ],
      },
      { text: "ran" },
    );
    await chat(harness, "run it");
    const [ran, refused] = toolResults(harness.llm.requests.at(-1)!);
    expect(ran).toBe("hi from /workspace\n");
    expect(refused).toMatch(
      /^error: the probe plugin's probe_exec failed: refused: plugins may not run dangerous commands/,
    );
  });

  it("gives a plugin less in groups than in DMs, and /stop aborts its running tool", async () => {
    const dir = withPlugins({
      "probe/plugin.json": JSON.stringify({
        name: "probe",
        version: "0.1.0",
        capabilities: ["network", "filesystem", "exec", "state", "send"],
      }),
      "probe/index.js": PROBE,
    });
    let fake!: FakeChatAdapter;
    harness = await startHarness({
      env: { HERALD_PLUGINS_DIR: dir, GATEWAY_ALLOWED_USERS: "fakechat:alice" },
      adapters: () => {
        fake = new FakeChatAdapter();
        return [fake];
      },
    });
    const caps = async (chatType: "dm" | "group", chatId: string) => {
      harness!.llm.script({ toolCalls: [{ name: "probe_caps", arguments: {} }] }, { text: `ok ${chatType}` });
      const before = fake.texts().length;
      await fake.inject({ text: "caps?", chatType, chat: { platform: "fakechat", chatId } });
      await fake.waitForTexts(before + 1);
      return toolResults(harness!.llm.requests.at(-1)!)[0];
    };
    expect(await caps("dm", "dm-1")).toBe("granted: network,filesystem,exec,state,send (seen)");
    expect(await caps("group", "group-1")).toBe("granted: network,state (seen)");

    harness.llm.script({ toolCalls: [{ name: "probe_wait", arguments: {} }] }, { text: "never" });
    const before = fake.texts().length;
    await fake.inject({ text: "wait for it", chat: { platform: "fakechat", chatId: "dm-1" } });
    const g = globalThis as { __probeWaiting?: boolean; __probeAborted?: boolean };
    await expect.poll(() => g.__probeWaiting).toBe(true);
    await fake.inject({ text: "/stop", chat: { platform: "fakechat", chatId: "dm-1" } });
    expect(await fake.waitForTexts(before + 1)).toContain("⏹ Stopped.");
    await expect.poll(() => g.__probeAborted).toBe(true);
  });

  it("fails only the call of a tool that throws, and contains hooks that throw or hang", async () => {
    const dir = withPlugins({
      "probe/plugin.json": JSON.stringify({ name: "probe", version: "0.1.0", capabilities: [] }),
      "probe/index.js": PROBE,
    });
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir, HERALD_PLUGINS_HOOK_TIMEOUT_MS: "300" } });
    harness.llm.script({ toolCalls: [{ name: "probe_throw", arguments: {} }] }, { text: "it failed, sorry" });
    const reply = await chat(harness, "break something");
    expect(toolResults(harness.llm.requests.at(-1)!)).toEqual([
      "error: the probe plugin's probe_throw failed: kaboom from the probe",
    ]);
    // beforeReply appended its mark; turnFinished saw the reply as sent (the plugin runs in this process).
    expect(reply.text).toBe("it failed, sorry [probed]");
    const finished = () => (globalThis as { __probeFinished?: string[] }).__probeFinished ?? [];
    await expect.poll(finished).toContain("ok:api:it failed, sorry [probed]");

    // inbound rewrites "shout:" messages and drops "#private" ones; the model never sees the latter.
    await chat(harness, "shout: quiet words", { sessionId: reply.sessionId! });
    expect(JSON.stringify(harness.llm.requests.at(-1)!.messages.at(-1))).toContain("QUIET WORDS");
    const before = harness.llm.requests.length;
    const dropped = await chat(harness, "#private do not read", { sessionId: reply.sessionId! });
    expect(dropped.status).not.toBe(200);
    expect(harness.llm.requests.length).toBe(before);

    // A beforeReply hook that hangs past the limit counts as no change; one that throws too.
    harness.llm.script({ text: "slow reply" });
    expect((await chat(harness, "anything", { sessionId: reply.sessionId! })).text).toBe("slow reply");
    harness.llm.script({ text: "throw reply" });
    expect((await chat(harness, "anything", { sessionId: reply.sessionId! })).text).toBe("throw reply");
  });

  it("with plugins off, loads none and /reload-plugins says so instead of loading them", async () => {
    const dir = withPlugins({
      "probe/plugin.json": JSON.stringify({ name: "probe", version: "0.2.0" }),
      "probe/index.js": PROBE,
    });
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir, HERALD_PLUGINS_ENABLED: "false" } });
    expect((await chat(harness, "/reload-plugins")).text).toMatch(
      /^Plugins are off .*HERALD_PLUGINS_ENABLED=false/,
    );
    expect((await chat(harness, "/plugins")).text).toMatch(/^No plugins/);
  });

  it("reports broken plugins with file and line, loads the rest, and reloads on /reload-plugins", async () => {
    const dir = withPlugins({
      "broken-syntax/plugin.json": JSON.stringify({ name: "broken-syntax", version: "1.0.0" }),
      "broken-syntax/index.js": "export default {\n  tools: [],\n  oops: ,\n};\n",
      "throws-at-load/plugin.json": JSON.stringify({ name: "throws-at-load", version: "1.0.0" }),
      "throws-at-load/index.js":
        "const ready = false;\nif (!ready) throw new Error('not configured');\nexport default {};\n",
      "bad-manifest/plugin.json": JSON.stringify({
        name: "bad-manifest",
        version: "1",
        capabilities: ["root"],
      }),
    });
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir } });
    const listed = await chat(harness, "/plugins");
    expect(listed.text).toMatch(
      /broken-syntax 1\.0\.0: failed — \S+\/broken-syntax\/index\.js:3: loading failed/,
    );
    expect(listed.text).toMatch(
      /throws-at-load 1\.0\.0: failed — \S+\/throws-at-load\/index\.js:2: loading failed: Error: not configured/,
    );
    expect(listed.text).toMatch(/bad-manifest: failed — \S+\/plugin\.json: plugin\.json: capabilities\.0: /);
    expect(listed.text).toContain("notes 1.0.0: loaded");

    // The gateway answers as usual.
    harness.llm.script({ text: "still here" });
    expect((await chat(harness, "hello")).text).toBe("still here");

    // A plugin dropped in while running is loaded by /reload-plugins.
    mkdirSync(join(dir, "probe"));
    writeFileSync(join(dir, "probe/plugin.json"), JSON.stringify({ name: "probe", version: "0.2.0" }));
    writeFileSync(join(dir, "probe/index.js"), PROBE);
    expect((await chat(harness, "/reload-plugins")).text).toMatch(/Reloading plugins/);
    await expect.poll(async () => (await chat(harness!, "/plugins")).text).toContain("probe 0.2.0: loaded");
    harness.llm.script({ toolCalls: [{ name: "probe_caps", arguments: {} }] }, { text: "ok" });
    await chat(harness, "caps?");
    expect(toolResults(harness.llm.requests.at(-1)!)).toEqual(["granted: none (seen)"]);
  });
});

/** A test plugin: tools that use (or lack) capabilities, one that throws, and hooks at every point. */
const PROBE = `
import { definePlugin, z } from "herald/plugin";
const need = (ctx, c) => { const why = ctx.refused(c); if (why) throw new Error(why); };
export default definePlugin({
  tools: [
    { name: "probe_caps", description: "granted capabilities", parameters: z.object({}),
      execute: (_a, ctx) => "granted: " + (ctx.granted.join(",") || "none") },
    { name: "probe_send", description: "send", parameters: z.object({ text: z.string() }),
      execute: async ({ text }, ctx) => { need(ctx, "send"); await ctx.send(text); return "sent"; } },
    { name: "probe_exec", description: "exec", parameters: z.object({ command: z.string().default("echo hi") }),
      execute: async ({ command }, ctx) => { need(ctx, "exec"); return (await ctx.exec.run(command)).stdout; } },
    { name: "probe_wait", description: "waits until stopped", parameters: z.object({}),
      execute: (_a, ctx) => new Promise((resolve, reject) => {
        globalThis.__probeWaiting = true;
        ctx.signal.addEventListener("abort", () => { globalThis.__probeAborted = true; reject(ctx.signal.reason); });
      }) },
    { name: "probe_throw", description: "throws", parameters: z.object({}),
      execute: () => { throw new Error("kaboom from the probe"); } },
  ],
  hooks: {
    inbound: ({ text }) => text.startsWith("shout:") ? { text: text.slice(6).trim().toUpperCase() }
      : text.includes("#private") ? { drop: true, reason: "private" } : undefined,
    afterToolCall: ({ tool, result }) => (tool === "probe_caps" ? { content: result.content + " (seen)" } : undefined),
    turnFinished: ({ outcome, reply, origin }) => {
      (globalThis.__probeFinished ??= []).push(outcome + ":" + origin.platform + ":" + reply);
    },
    beforeReply: async ({ text }, { signal }) => {
      if (text === "slow reply") await new Promise((r) => setTimeout(r, 5000));
      if (text === "throw reply") throw new Error("hook bug");
      return { text: text + " [probed]" };
    },
  },
});
`;
