/**
 * The plugin host and the hook runner without a gateway: the default capabilities by chat type (groups
 * stricter than DMs), which config lets a plugin's fetch reach private addresses (over the wire, to a
 * local server), and hooks chained in order with errors and timeouts contained.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { setEnabled } from "../../agent/plugins/enabled.js";
import { HookRunner } from "../../agent/plugins/hooks/runner.js";
import type { ToolContext } from "../../agent/types.js";
import { registerPluginsCommands } from "../../app/cli/plugins.js";
import { loadConfig } from "../../app/config.js";
import { printDoctor, runDoctor } from "../../app/doctor.js";
import { createPlugins } from "../../app/plugins.js";
import { silentLogger } from "../../core/logger.js";
import type { TurnOrigin } from "../../core/turn.js";
import { startFakeLlm } from "../fakes/llm/index.js";
import { startEchoServer } from "../fakes/web/echo.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-plugins-unit-"));
  dirs.push(dir);
  mkdirSync(join(dir, "plugins/caps"), { recursive: true });
  writeFileSync(
    join(dir, "plugins/caps/plugin.json"),
    JSON.stringify({
      name: "caps",
      version: "1.0.0",
      capabilities: ["network", "filesystem", "exec", "state", "send"],
    }),
  );
  writeFileSync(
    join(dir, "plugins/caps/index.js"),
    `import { z } from "herald/plugin";
export default { tools: [{ name: "caps", description: "granted", parameters: z.object({}),
  execute: (_a, ctx) => ctx.granted.join(",") + (ctx.send ? " +send" : "") + (ctx.dataDir ? " +dir" : "") }] };`,
  );
  return dir;
}

const origin = (chatType: "dm" | "group"): TurnOrigin => ({
  sessionId: "s1",
  sessionKey: `telegram:1:${chatType}`,
  chat: { platform: "telegram", chatId: "1" },
  chatType,
  userId: "7",
});

function context(chatType: "dm" | "group", homeDir: string): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: origin(chatType),
    state: {
      searchSessions: async () => [],
      chat: { notify: async () => undefined, send: async () => ({ to: "", duplicate: false }) },
    },
    logger: silentLogger(),
    homeDir,
    progress: () => undefined,
  };
}

describe("plugin capabilities", () => {
  it("grants groups only network and state by default, DMs all (exec only with a backend)", async () => {
    const dir = home();
    const config = loadConfig({ env: { HERALD_HOME: dir } });
    expect(config.plugins.capabilities.group).toEqual(["network", "state"]);
    const plugins = await createPlugins(config, silentLogger());
    const call = { id: "c1", type: "function" as const, function: { name: "caps", arguments: "{}" } };
    const registry = plugins.registry(new (await import("../../agent/tool-registry.js")).ToolRegistry());
    const tools = registry.forToolsets([]);
    const dm = await registry.run(call, tools, context("dm", dir));
    expect(dm.content).toBe("network,filesystem,state,send +send +dir");
    const group = await registry.run(call, tools, context("group", dir));
    expect(group.content).toBe("network,state");
  });

  it("opens a plugin's fetch to private addresses only by config: web.allow_private or plugins.allow_private", async () => {
    const dir = home();
    mkdirSync(join(dir, "plugins/fetcher"));
    writeFileSync(
      join(dir, "plugins/fetcher/plugin.json"),
      JSON.stringify({ name: "fetcher", version: "1.0.0", capabilities: ["network"] }),
    );
    writeFileSync(
      join(dir, "plugins/fetcher/index.js"),
      `import { z } from "herald/plugin";
export default { tools: [{ name: "fetch_url", description: "POST to a URL", parameters: z.object({ url: z.string() }),
  execute: async ({ url }, ctx) => { const res = await ctx.fetch(url, { method: "POST", body: "ping" });
    return res.status + " " + (await res.json()).body; } }] };`,
    );
    const echo = await startEchoServer();
    try {
      const fetchAs = async (env: Record<string, string>, yaml?: string) => {
        if (yaml) writeFileSync(join(dir, "config.yaml"), yaml);
        else rmSync(join(dir, "config.yaml"), { force: true });
        const plugins = await createPlugins(
          loadConfig({ env: { HERALD_HOME: dir, ...env } }),
          silentLogger(),
        );
        const registry = plugins.registry(new (await import("../../agent/tool-registry.js")).ToolRegistry());
        const call = {
          id: "c1",
          type: "function" as const,
          function: { name: "fetch_url", arguments: JSON.stringify({ url: `${echo.url}/hook` }) },
        };
        return (await registry.run(call, registry.forToolsets([]), context("dm", dir))).content;
      };
      // Allowing another plugin does not allow this one; the refusal says how to allow it.
      expect(await fetchAs({ HERALD_PLUGINS_ALLOW_PRIVATE: "caps" })).toBe(
        `error: the fetcher plugin's fetch_url failed: refused ${echo.url}/hook: 127.0.0.1 is a loopback ` +
          '(127.0.0.0/8) address; plugins may reach only public addresses unless the owner allows it: add "fetcher" ' +
          "to plugins.allow_private in config.yaml (HERALD_PLUGINS_ALLOW_PRIVATE), or set web.allow_private to let " +
          "every plugin and web tool reach private addresses",
      );
      expect(echo.connections()).toBe(0);
      expect(await fetchAs({}, "plugins:\n  allow_private: [fetcher]\n")).toBe("200 ping");
      expect(await fetchAs({ HERALD_WEB_ALLOW_PRIVATE: "true" })).toBe("200 ping");
      expect(echo.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /hook", "POST /hook"]);
    } finally {
      await echo.close();
    }
  });

  it("leaves out a disabled plugin", async () => {
    const dir = home();
    setEnabled(join(dir, "plugins"), "caps", false);
    const plugins = await createPlugins(loadConfig({ env: { HERALD_HOME: dir } }), silentLogger());
    expect(plugins.host.reports()).toMatchObject([{ name: "caps", status: "disabled" }]);
    expect(plugins.host.tools()).toEqual([]);
  });
});

describe("HookRunner", () => {
  it("chains rewrites in order, and ignores a hook that throws or runs out of time", async () => {
    const seen: string[] = [];
    const runner = new HookRunner({
      timeoutMs: 50,
      logger: silentLogger(),
      source: () => [
        { name: "a", hooks: { beforeReply: ({ text }) => ({ text: `${text} a` }) } },
        {
          name: "slow",
          hooks: {
            beforeReply: () => new Promise((resolve) => setTimeout(() => resolve({ text: "late" }), 500)),
          },
        },
        {
          name: "bad",
          hooks: {
            beforeReply: () => {
              throw new Error("bug");
            },
          },
        },
        {
          name: "b",
          hooks: {
            beforeReply: ({ text }) => {
              seen.push(text);
              return { text: `${text} b` };
            },
          },
        },
      ],
    });
    expect(await runner.beforeReply("reply", origin("dm"))).toBe("reply a b");
    expect(seen).toEqual(["reply a"]);
  });

  it("takes the first block of a tool call, with the plugin named", async () => {
    const runner = new HookRunner({
      logger: silentLogger(),
      source: () => [
        {
          name: "guard",
          hooks: { beforeToolCall: ({ tool }) => (tool === "terminal" ? { block: "no shells" } : undefined) },
        },
      ],
    });
    expect(await runner.beforeToolCall("terminal", {}, origin("dm"))).toBe(
      "blocked by the guard plugin: no shells",
    );
    expect(await runner.beforeToolCall("memory", {}, origin("dm"))).toBeUndefined();
  });
});

describe("herald plugins and doctor", () => {
  async function herald(homeDir: string, ...args: string[]): Promise<string> {
    let printed = "";
    const program = new Command().exitOverride();
    registerPluginsCommands(program, {
      config: () => loadConfig({ env: { HERALD_HOME: homeDir } }),
      out: (text) => {
        printed += text;
      },
    });
    await program.parseAsync(["node", "herald", ...args]);
    return printed;
  }

  it("lists, disables and enables plugins; doctor shows them", async () => {
    const dir = home();
    expect(await herald(dir, "plugins", "list")).toBe(
      "caps 1.0.0: loaded (capabilities: network, filesystem, exec, state, send; tools: caps)\n",
    );
    expect(await herald(dir, "plugins", "disable", "caps")).toMatch(/^caps disabled\. A running gateway/);
    expect(await herald(dir, "plugins", "list")).toMatch(/^caps 1\.0\.0: disabled/);
    expect(await herald(dir, "plugins", "enable", "caps")).toMatch(/^caps enabled\./);
    expect(await herald(dir, "plugins", "list")).toMatch(/^caps 1\.0\.0: loaded/);

    mkdirSync(join(dir, "plugins/broken"));
    writeFileSync(join(dir, "plugins/broken/plugin.json"), '{"name": "broken", "version": "1.0.0"}');
    writeFileSync(join(dir, "plugins/broken/index.js"), "export default {\n  tools: 3,\n};\n");
    const llm = await startFakeLlm();
    try {
      let out = "";
      const code = printDoctor(
        await runDoctor({
          HERALD_HOME: dir,
          OPENAI_BASE_URL: llm.url,
          OPENAI_API_KEY: "k",
          HERALD_MODEL: "m",
        }),
        {
          write: (chunk: string) => {
            out += chunk;
            return true;
          },
        } as unknown as NodeJS.WritableStream,
      );
      expect(out).toContain("plugin caps 1.0.0: loaded");
      expect(out).toMatch(
        /✗ plugin broken 1\.0\.0: failed — \S+\/broken\/index\.js: `tools` must be an array/,
      );
      expect(code).toBe(1);
    } finally {
      await llm.close();
    }
  });

  it("keeps one chat's inbound messages in arrival order when a hook is slow on the first", async () => {
    const runner = new HookRunner({
      logger: silentLogger(),
      source: () => [
        {
          name: "slow-first",
          hooks: {
            inbound: async ({ text }) => {
              if (text === "first") await new Promise((resolve) => setTimeout(resolve, 100));
              return { text: text.toUpperCase() };
            },
          },
        },
      ],
    });
    const message = (text: string) =>
      ({
        platform: "fakechat",
        messageId: text,
        chat: { platform: "fakechat", chatId: "c1" },
        chatType: "dm",
        sender: { id: "alice" },
        text,
        mentioned: true,
      }) as const;
    const done: string[] = [];
    await Promise.all(
      ["first", "second"].map((t) => runner.inbound(message(t)).then((m) => done.push(m?.text ?? "dropped"))),
    );
    expect(done).toEqual(["FIRST", "SECOND"]);
  });
});
