/**
 * `execute_code`'s socket in the real bubblewrap sandbox, tool by tool: another session's sandbox
 * reaches neither the socket's path in the sandbox nor its folder on the host, and a connection
 * without the execution's token gets no answer; in a turn the script's calls are the turn's progress
 * events; a node outside /usr is bound in for JavaScript; the call budget refuses calls past it; a
 * crash's leftover folders are swept.
 */

import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { runCommand, SandboxBackend, WorkspaceManager } from "../../agent/exec/index.js";
import { defineTool, type Tool, type ToolContext, type ToolOutput, ToolRegistry } from "../../agent/index.js";
import { runTurn } from "../../agent/loop.js";
import { createModelClient } from "../../agent/model-client.js";
import { executeCodeTool } from "../../agent/tools/code/index.js";
import { silentLogger } from "../../core/logger.js";
import type { TurnProgress } from "../../core/turn.js";
import { startFakeLlm } from "../fakes/llm/index.js";

let home: string;
let backend: SandboxBackend;
let workspaces: WorkspaceManager;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), "herald-code-"));
  backend = new SandboxBackend();
  workspaces = new WorkspaceManager({ rootDir: join(home, "workspaces"), logger: silentLogger() });
});
afterAll(async () => {
  await backend.close();
  rmSync(home, { recursive: true, force: true });
});

function context(registry: ToolRegistry, sessionKey: string): ToolContext {
  const ctx: ToolContext = {
    signal: new AbortController().signal,
    origin: {
      sessionId: sessionKey,
      sessionKey,
      chat: { platform: "api", chatId: sessionKey },
      chatType: "dm",
      userId: sessionKey,
    },
    turn: { toolsets: ["test"], depth: 0 },
    callId: "call-1",
    state: { searchSessions: async () => [] },
    logger: silentLogger(),
    homeDir: home,
    progress: () => {},
    callTool: (call, options) => {
      const allowed = registry.forToolsets(["test"]).filter(options.tools ?? (() => true));
      return registry.run(
        { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } },
        allowed,
        { ...ctx, signal: options.signal },
      );
    },
  };
  return ctx;
}

const testTool = (name: string, run: () => Promise<string>): Tool =>
  defineTool({ name, description: name, parameters: z.object({}), toolset: "test", execute: run });

async function execute(tool: Tool, code: string, ctx: ToolContext): Promise<ToolOutput> {
  const out = await tool.execute(tool.parameters.parse({ language: "python", code }), ctx);
  return typeof out === "string" ? { content: out } : out;
}

describe("execute_code in the sandbox", () => {
  it("another session's sandbox cannot reach the socket; a wrong token gets no answer", async () => {
    const registry = new ToolRegistry();
    let probe = "";
    registry.register(
      testTool("probe", async () => {
        // While session A's script waits on this call, its socket is listening.
        const [dir] = await readdir(join(home, "run", "code"));
        const hostSocket = join(home, "run", "code", dir ?? "", "tools.sock");
        const other = await workspaces.ensure({ sessionKey: "session-b" });
        await backend.prepare(other);
        const script = (path: string) =>
          `python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("${path}"); print("connected")' 2>&1 | tail -1`;
        const run = await runCommand(backend, other, {
          command: `${script("/run/herald/tools.sock")}; ${script(hostSocket)}`,
        });
        probe = run.stdout;
        const stranger = await new Promise<string>((resolve) => {
          const s = connect(hostSocket);
          let got = "";
          s.on("connect", () => s.write('{"type":"call","token":"guess","tool":"probe","args":{}}\n'));
          s.on("data", (d) => {
            got += String(d);
          });
          s.on("close", () => resolve(got));
        });
        return `stranger got: [${stranger}]`;
      }),
    );
    const tool = executeCodeTool({ backend, workspaces, toolsFor: (t) => registry.forToolsets(t) });
    registry.register(tool);
    const out = await execute(
      tool,
      "from herald_tools import probe\nprobe()",
      context(registry, "session-a"),
    );
    expect(out.content).toMatch(/^exit code 0/);
    expect(out.content).toContain('return value: "stranger got: []"');
    expect(probe).not.toContain("connected");
    expect(probe.match(/No such file or directory/g)).toHaveLength(2);
    // The execution's folder is gone with it.
    expect(await readdir(join(home, "run", "code"))).toEqual([]);
  });

  it("in a turn, the script's calls are progress events of the turn, labelled as direct calls are", async () => {
    const llm = await startFakeLlm();
    try {
      const registry = new ToolRegistry();
      registry.register(
        defineTool({
          name: "ping",
          description: "ping",
          parameters: z.object({ host: z.string() }),
          toolset: "test",
          label: (a) => `📡 ping ${a.host}`,
          execute: async (a) => `pong from ${a.host}`,
        }),
      );
      registry.register(executeCodeTool({ backend, workspaces, toolsFor: (t) => registry.forToolsets(t) }));
      llm.script(
        {
          toolCalls: [
            { name: "execute_code", arguments: { language: "python", code: 'ping("a")\nping(host="b")' } },
          ],
        },
        { text: "done" },
      );
      const events: TurnProgress[] = [];
      const result = await runTurn(
        {
          kind: "turn",
          turnId: "t1",
          origin: context(registry, "session-d").origin,
          history: [],
          input: { text: "go" },
          systemPrompt: "",
          toolsets: ["test", "code"],
          createdAt: 0,
        },
        {
          model: createModelClient({
            baseUrl: llm.url,
            apiKey: "k",
            name: "m",
            fallbacks: [],
            contextTokens: 128_000,
            maxIterations: 5,
            timeoutMs: 20_000,
            maxRetries: 0,
            vision: false,
          }),
          tools: registry,
          state: { searchSessions: async () => [] },
          logger: silentLogger(),
          homeDir: home,
          signal: new AbortController().signal,
          progress: (e) => events.push(e),
        },
      );
      expect(result.kind).toBe("ok");
      const starts = events.flatMap((e) => (e.type === "tool-start" ? [e.label] : []));
      expect(starts).toEqual(["🐍 python: 2 lines", "📡 ping a", "📡 ping b"]);
      const ends = events.flatMap((e) => (e.type === "tool-end" ? [`${e.name} ${e.ok}`] : []));
      expect(ends).toEqual(["ping true", "ping true", "execute_code true"]);
      expect(String(llm.requests[1]?.messages.at(-1)?.content)).toContain("tool calls: 2 (ping ×2)");
    } finally {
      await llm.close();
    }
  });

  it("runs JavaScript with a node outside /usr (nvm, a tarball), bound into the sandbox", async () => {
    const registry = new ToolRegistry();
    registry.register(testTool("ping", async () => "pong"));
    const tool = executeCodeTool({ backend, workspaces, toolsFor: (t) => registry.forToolsets(t) });
    registry.register(tool);
    mkdirSync(join(home, "nvm"), { recursive: true });
    copyFileSync(process.execPath, join(home, "nvm", "node"));
    const real = process.execPath;
    Object.defineProperty(process, "execPath", { value: join(home, "nvm", "node"), configurable: true });
    try {
      const out = await tool.execute(
        tool.parameters.parse({
          language: "javascript",
          code: 'import { ping } from "herald-tools";\nexport default [process.execPath, await ping()];',
        }),
        context(registry, "session-e"),
      );
      const text = typeof out === "string" ? out : out.content;
      expect(text).toContain('return value: ["/opt/herald-code-node/node","pong"]');
    } finally {
      Object.defineProperty(process, "execPath", { value: real, configurable: true });
    }
  });

  it("refuses calls past the budget, and the script sees why", async () => {
    const registry = new ToolRegistry();
    registry.register(testTool("ping", async () => "pong"));
    const tool = executeCodeTool({
      backend,
      workspaces,
      maxToolCalls: 3,
      toolsFor: (t) => registry.forToolsets(t),
    });
    registry.register(tool);
    const code = [
      "answers = []",
      "for i in range(5):",
      "    try:",
      "        answers.append(ping())",
      "    except ToolError as e:",
      "        answers.append(str(e))",
      "answers",
    ].join("\n");
    const out = await execute(tool, code, context(registry, "session-c"));
    expect(out.content).toContain(
      'return value: ["pong", "pong", "pong", "the budget of 3 tool calls per execution is used up',
    );
    expect(out.content).toMatch(/tool calls: 5 \(ping ×5\)/);
    expect(out.content).toMatch(/4\. ping refused: the budget of 3/);
  });

  it("removes the folders of executions a crash cut short, and keeps recent ones", async () => {
    const registry = new ToolRegistry();
    const tool = executeCodeTool({
      backend,
      workspaces,
      timeoutS: 60,
      toolsFor: (t) => registry.forToolsets(t),
    });
    registry.register(tool);
    const base = join(home, "run", "code");
    mkdirSync(join(base, "xstale"), { recursive: true });
    mkdirSync(join(base, "xrecent"), { recursive: true });
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(base, "xstale"), old, old);
    await execute(tool, "1", context(registry, "session-f"));
    expect(await readdir(base)).toEqual(["xrecent"]);
    rmSync(join(base, "xrecent"), { recursive: true });
  });
});
