/**
 * `TurnTools`: which schemas a request carries, derived from the session's history alone, so a later
 * turn (or another worker) sends the same tools in the same order.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TurnTools } from "../../agent/lazy-tools.js";
import type { Tool } from "../../agent/types.js";
import { loadConfig } from "../../app/config.js";
import { eagerToolsetsFor } from "../../app/toolsets.js";
import type { ChatMessage, ToolCall } from "../../core/types.js";

const tool = (name: string, toolset: string): Tool => ({
  name,
  description: `${name} does things`,
  parameters: z.object({ x: z.string().min(1).optional(), n: z.number().int().optional() }),
  toolset,
  execute: async () => "ok",
});

const enabled = [
  tool("session_search", "core"),
  tool("terminal", "terminal"),
  tool("process", "terminal"),
  tool("read_file", "files"),
  tool("web_search", "web"),
];
const names = (view: TurnTools) => view.json.map((t) => t.function.name);
const call = (name: string, args: unknown = {}): ToolCall => ({
  id: `c-${name}`,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});

describe("TurnTools", () => {
  it("sends the eager schemas and load_tools, and lists the rest by name in a fixed section", () => {
    const view = new TurnTools(enabled, ["core"], (t) => (t === "web" ? "search the web" : undefined));
    expect(names(view)).toEqual(["session_search", "load_tools"]);
    expect(view.index.split("\n").slice(1)).toEqual([
      "- files (read_file)",
      "- terminal (process, terminal)",
      "- web (web_search): search the web",
    ]);
    expect(view.allowed.map((t) => t.name)).toContain("read_file");
    // Zod's filler is not sent: no safe-integer bounds, no minLength 1.
    expect(JSON.stringify(view.json)).not.toMatch(/9007199254740991|"minLength":1/);
  });

  it("appends loaded toolsets in load order, the same order when derived again from the history", async () => {
    const view = new TurnTools(enabled, ["core"]);
    const loader = view.allowed.find((t) => t.name === "load_tools")!;
    const answer = await loader.execute({ toolsets: ["web", "terminal"] }, {} as never);
    expect(answer).toEqual({
      content:
        "web: loaded (web_search); call them from your next step on.\nterminal: loaded (terminal, process); call them from your next step on.",
    });
    expect(view.note([call("load_tools", { toolsets: ["web", "terminal"] })])).toBe(true);
    expect(view.note([call("read_file", { path: "a" })])).toBe(true);
    expect(view.note([call("terminal")])).toBe(false);
    const order = ["session_search", "load_tools", "web_search", "terminal", "process", "read_file"];
    expect(names(view)).toEqual(order);

    const history: ChatMessage[] = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [call("load_tools", { toolsets: ["web", "terminal"] })],
      },
      { role: "tool", content: "loaded", tool_call_id: "c-load_tools" },
      { role: "assistant", content: null, tool_calls: [call("read_file", { path: "a" })] },
    ];
    const later = new TurnTools(enabled, ["core"]);
    later.noteHistory(history);
    expect(names(later)).toEqual(order);
    expect(JSON.stringify(later.json)).toBe(JSON.stringify(view.json));
    expect(later.index).toBe(view.index);
  });

  it("answers an unknown or eager toolset without loading anything", async () => {
    const view = new TurnTools(enabled, ["core"]);
    const loader = view.allowed.find((t) => t.name === "load_tools")!;
    expect(await loader.execute({ toolsets: ["gardening"] }, {} as never)).toEqual({
      content: "error: gardening: no such toolset here. You can load: files, terminal, web.",
      isError: true,
    });
    expect(await loader.execute({ toolsets: ["core"] }, {} as never)).toEqual({
      content: "core: always loaded.",
    });
    expect(view.note([call("load_tools", { toolsets: ["gardening", "core"] })])).toBe(false);
  });

  it("sends every schema and no load_tools when lazy tools are off or nothing is lazy", () => {
    const off = new TurnTools(enabled, undefined);
    expect(names(off)).toEqual(enabled.map((t) => t.name));
    expect(off.index).toBe("");
    const allEager = new TurnTools(enabled, ["core", "terminal", "files", "web"]);
    expect(names(allEager)).toEqual(enabled.map((t) => t.name));
    expect(allEager.allowed).toEqual(enabled);
  });
});

describe("tools config", () => {
  const withYaml = (yaml: string, env: Record<string, string> = {}) => {
    const home = mkdtempSync(join(tmpdir(), "herald-lazy-config-"));
    try {
      writeFileSync(join(home, "config.yaml"), yaml);
      return loadConfig({ env: { HERALD_HOME: home, ...env } });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };

  it("picks eager toolsets by platform and chat type, then platform, then tools.eager; none when lazy is off", () => {
    const config = withYaml(
      "tools:\n  eager: [core]\n  eager_for:\n    telegram: [core, web]\n    telegram:group: [memory]\n",
    );
    expect(eagerToolsetsFor(config, "telegram", "group")).toEqual(["memory"]);
    expect(eagerToolsetsFor(config, "telegram", "dm")).toEqual(["core", "web"]);
    expect(eagerToolsetsFor(config, "slack", "dm")).toEqual(["core"]);
    expect(eagerToolsetsFor(withYaml("", { HERALD_TOOLS_LAZY: "false" }), "slack", "dm")).toBeUndefined();
    expect(eagerToolsetsFor(withYaml("", { HERALD_TOOLS_EAGER: "core,terminal" }), "api", "dm")).toEqual([
      "core",
      "terminal",
    ]);
    expect(withYaml("").tools).toMatchObject({ lazy: true, eager: ["core", "memory", "skills"] });
  });

  it("refuses a tools.eager_for key that is not a platform or platform:chat type, naming it", () => {
    expect(() => withYaml('tools:\n  eager_for:\n    "telegram:channel": [core]\n')).toThrow(
      "tools.eager_for is invalid: 'telegram:channel' is neither a platform name nor <platform>:dm|group; write e.g. telegram or telegram:group",
    );
  });
});
