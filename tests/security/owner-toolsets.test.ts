/**
 * Toolsets by whom a turn acts for, over the wire: one gateway in front of the fake Telegram whose
 * Telegram turns get no terminal (`TELEGRAM_TOOLSETS`), an MCP server configured without `access`
 * (owners only), a plugin only owners get and a plugin that searches sessions; the owner (on the
 * allowlist) and a user admitted by a pairing code each in their DM, the scripted model calling tools.
 * A paired user's cron job gets no toolset their chat lacks (refused when made, dropped at each run),
 * and the owners-only MCP server and plugin are absent from the paired user's requests and refused if
 * called; a plugin's session search reads only the caller's own conversations.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SqliteCronStore } from "../../scheduler/sqlite-cron-store.js";
import { messageText } from "../fakes/llm/index.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";
import { ask, command, fire, jobsNamed, type PathContext, toolResults } from "./owner-paths.js";
import { pair, type Rig, startRig } from "./owner-rig.js";

const OWNER = 100;
const PAIRED = 300;

const PLUGINS = {
  poster: {
    capabilities: [],
    source: `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [{ name: "poster_post", description: "post to the team channel", parameters: z.object({}),
    execute: async () => "posted" }],
  commands: { poster: { description: "post", run: () => "posted by command" } },
});
`,
  },
  recall: {
    capabilities: ["state"],
    source: `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [{ name: "recall_search", description: "search conversations", parameters: z.object({ query: z.string() }),
    execute: async ({ query }, ctx) => {
      const hits = await ctx.state.searchSessions(query, { limit: 5 });
      return hits.length ? hits.map((h) => h.snippet).join(" | ") : "no hits";
    } }],
});
`,
  },
};

/** The tool names and the system prompt of the model's first request for `key`'s turn. */
function requestOf(rig: Rig, key: string): { tools: string[]; system: string } {
  const request = rig.h.llm.requests.find((r) =>
    r.messages.some((m) => m.role === "user" && messageText(m).includes(`[[${key}]]`)),
  );
  expect(request, `a request for [[${key}]]`).toBeDefined();
  return {
    tools: (request!.tools ?? []).map((t) => t.function.name),
    system: messageText(request!.messages.find((m) => m.role === "system")),
  };
}

describe("toolsets: a paired user gets no more than their chat does", () => {
  let rig: Rig;
  let owner: PathContext;
  let paired: PathContext;
  beforeAll(async () => {
    rig = await startRig(
      OWNER,
      {
        TELEGRAM_ALLOWED_USERS: String(OWNER),
        TELEGRAM_TOOLSETS: "core,cron,memory,messaging",
        HERALD_PLUGINS_OWNERS_ONLY: "poster",
      },
      {
        plugins: PLUGINS,
        configYaml: `mcp_servers:\n  poster:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
      },
    );
    owner = rig;
    paired = { ...rig, me: PAIRED };
    await pair(paired);
    await vi.waitFor(() => expect(rig.h.gateway.mcp?.status()[0]?.state).toBe("connected"), {
      timeout: 20_000,
    });
  }, 40_000);
  afterAll(() => rig?.stop());

  it("a cronjob asking for terminal where the chat has none is refused; a saved one's run does not get it", async () => {
    const create = (key: string, toolsets: string[]) => ({
      name: "cronjob",
      arguments: { action: "create", schedule: "in 20m", prompt: `x [[${key}/run]]`, name: key, toolsets },
    });
    const [refused] = await ask(paired, "c-terminal", [create("c-terminal", ["terminal"])]);
    expect(refused).toMatch(/this chat's turns don't get the toolset terminal, so its jobs can't either/);
    expect(jobsNamed(rig.h, "c-terminal")).toEqual([]);
    const [made] = await ask(paired, "c-memory", [create("c-memory", ["memory"])]);
    expect(made).toMatch(/Created job/);
    expect(jobsNamed(rig.h, "c-memory")).toHaveLength(1);

    // A job an older Herald saved with terminal: each run asks again, and the run has no terminal.
    // Beside a live gateway on a loaded host: wait for its writes rather than fail on a busy database.
    const store = SqliteCronStore.open(`${rig.h.homeDir}/state.db`, { busyTimeoutMs: 30_000 });
    const now = Date.now();
    store.insertJob(
      "jold300",
      {
        name: "c-old",
        prompt: "report [[c-old/run]]",
        schedule: { kind: "every", everyMs: 3_600_000, anchorAt: now },
        deliver: ["origin"],
        origin: { platform: "telegram", chatId: String(PAIRED) },
        createdBy: String(PAIRED),
        toolsets: ["terminal", "memory"],
      },
      now + 3_600_000,
      now,
    );
    store.close();
    await rig.h.gateway.cron.sync();
    rig.model.plan("c-old/run", [{ name: "terminal", arguments: { command: "id" } }]);
    await fire(paired, "c-old");
    expect(toolResults(rig.h, "c-old/run")).toEqual([
      expect.stringMatching(/^error: there is no tool named 'terminal'/),
    ]);
  }, 60_000);

  it("an owners-only MCP server's tools are absent from a paired user's requests and refused if called", async () => {
    await ask(paired, "m-paired", [
      { name: "mcp_poster_echo", arguments: { message: "leak" } },
      { name: "load_tools", arguments: { toolsets: ["mcp_poster"] } },
    ]);
    const seen = requestOf(rig, "m-paired");
    expect(seen.tools.filter((t) => t.startsWith("mcp"))).toEqual([]);
    expect(seen.system).not.toContain("mcp_poster");
    const [called, loaded] = toolResults(rig.h, "m-paired");
    expect(called).toMatch(/^error: there is no tool named 'mcp_poster_echo'/);
    expect(loaded).not.toMatch(/mcp_poster_echo/);

    await ask(owner, "m-owner", [{ name: "mcp_poster_echo", arguments: { message: "hi" } }]);
    expect(requestOf(rig, "m-owner").system).toContain("mcp_poster");
    expect(toolResults(rig.h, "m-owner")).toEqual([expect.stringContaining("Echo: hi")]);
  }, 60_000);

  it("an owners-only plugin's tools and commands are the owner's; a plugin's session search reads the caller's own", async () => {
    await ask(paired, "g-paired", [{ name: "poster_post", arguments: {} }]);
    expect(requestOf(rig, "g-paired").tools).not.toContain("poster_post");
    expect(requestOf(rig, "g-paired").system).not.toContain("poster_post");
    expect(toolResults(rig.h, "g-paired")).toEqual([
      expect.stringMatching(/^error: there is no tool named 'poster_post'/),
    ]);
    expect(await command(paired, "/poster", /posted|owner only/)).toMatch(/is for the owner only/);
    expect(await ask(owner, "g-owner", [{ name: "poster_post", arguments: {} }])).toEqual(["posted"]);

    await ask(owner, "g-secret zebra42");
    const search = { name: "recall_search", arguments: { query: "zebra42" } };
    expect(await ask(paired, "g-recall-paired", [search])).toEqual(["no hits"]);
    expect(await ask(owner, "g-recall-owner", [search])).toEqual([expect.stringContaining("zebra42")]);
  }, 60_000);
});
