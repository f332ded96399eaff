/**
 * The owner policy as a table. Every path that sends elsewhere or changes shared routing (tools,
 * commands, plugins' ctx.send, Herald's MCP server, webhooks) is run over the wire for each kind of
 * caller: a whole gateway in-process in front of the fake Telegram, the scripted model calling the
 * tools, commands sent as chat messages. Owners (the users config names) may do all of it; users
 * admitted by a pairing code or by GATEWAY_ALLOW_ALL_USERS, and allowed users when GATEWAY_OWNERS names
 * someone else, may only reach their own chat; a refused action changes nothing. The last block checks
 * that every registered tool and command is either in the table or declared as acting on the caller's
 * own chat only, so a new path that sends elsewhere cannot be added without a row.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MCP_TOOL_NAMES } from "../../gateway/mcp-server/server.js";
import { botSays } from "../e2e/telegram-helpers.js";
import { chat } from "../helpers/gateway-harness.js";
import {
  commandPaths,
  HOME,
  jobsNamed,
  OTHER,
  type OwnerPath,
  toolPaths,
  toolResults,
} from "./owner-paths.js";
import { pair, type Rig, startRig } from "./owner-rig.js";

/** A kind of caller, on a gateway of its own configuration; `me` is its user and DM chat id. */
interface CallerKind {
  name: string;
  me: number;
  owner: boolean;
  pair?: boolean;
  env: Record<string, string>;
}

const CALLERS: CallerKind[] = [
  {
    name: "owner (GATEWAY_ALLOWED_USERS)",
    me: 100,
    owner: true,
    env: { GATEWAY_ALLOWED_USERS: "telegram:100" },
  },
  {
    name: "allowed user (TELEGRAM_ALLOWED_USERS)",
    me: 200,
    owner: true,
    env: { TELEGRAM_ALLOWED_USERS: "200" },
  },
  {
    name: "allowed user while GATEWAY_OWNERS names another",
    me: 200,
    owner: false,
    env: { TELEGRAM_ALLOWED_USERS: "100,200", GATEWAY_OWNERS: "telegram:100" },
  },
  {
    name: "paired user (pairing code)",
    me: 300,
    owner: false,
    pair: true,
    env: { TELEGRAM_ALLOWED_USERS: "100" },
  },
  {
    name: "allow-all user (GATEWAY_ALLOW_ALL_USERS)",
    me: 400,
    owner: false,
    env: { TELEGRAM_ALLOWED_USERS: "100", GATEWAY_ALLOW_ALL_USERS: "true" },
  },
];

const PATHS: OwnerPath[] = [...toolPaths, ...commandPaths];

/** Commands that act on the caller's own chat, session or turns only (or just read), and why. */
const OWN_CHAT_COMMANDS: Record<string, string> = {
  new: "starts the caller's own session",
  reset: "the same as /new",
  stop: "the caller's own turns and background tasks (by the session key)",
  status: "reads the caller's session",
  help: "lists what the caller may run",
  start: "a greeting",
  retry: "the caller's own session",
  undo: "the caller's own session",
  compress: "the caller's own session",
  title: "the caller's own session",
  sessions: "lists the caller's chat's sessions",
  resume: "the caller's chat's sessions",
  whoami: "reads the caller's own identity",
  model: "the caller's session's model; only owners may name an unlisted one",
  reasoning: "the caller's session's setting",
  approve: "the caller's own pending request (in groups only the asker's)",
  deny: "the caller's own pending request",
  personality: "the caller's chat's personality",
  voice: "the caller's chat's replies",
  todo: "reads the caller's session's plan",
  background: "a turn whose answer comes to the caller's chat",
  tasks: "lists the caller's chat's background tasks",
  skills: "lists the skills (/<skill> runs a turn in the caller's chat)",
  plugins: "lists the plugins",
  checkpoints: "lists the caller's session workspace's checkpoints",
  diff: "the caller's own workspace; owners only where a workspace is shared (checkpoints.test.ts)",
  rollback: "the caller's own workspace; owners only where a workspace is shared (checkpoints.test.ts)",
  agent: "shows the caller's chat's agent; only owners switch it (agents-telegram.test.ts)",
};

/** Tools that deliver nowhere and change no routing of others, and why. */
const OWN_CHAT_TOOLS: Record<string, string> = {
  session_search: "reads sessions",
  memory: "the caller's own memory (owners share one; every other user has theirs: owner-memory.test.ts)",
  skills_list: "reads skills",
  skill_view: "reads skills",
  skill_manage: "owners only, refused to others: skills enter every chat's prompt (owner-memory.test.ts)",
  clarify: "asks in the turn's own chat",
  todo: "the turn's session's plan",
  task_board: "a board in state; it delivers nothing",
  terminal: "the session's workspace; notices go to the turn's own chat",
  process: "the session's own background processes",
  read_file: "the session's workspace",
  write_file: "the session's workspace",
  patch: "the session's workspace",
  search_files: "the session's workspace",
  web_search: "reads the web",
  web_extract: "reads the web",
  vision_analyze: "reads images",
  browser_navigate: "the session's own browser context; reads the web",
  browser_snapshot: "the session's own browser context",
  browser_click: "acts in the session's own browser context",
  browser_type: "acts in the session's own browser context",
  browser_select: "acts in the session's own browser context",
  browser_press: "acts in the session's own browser context",
  browser_scroll: "the session's own browser context",
  browser_back: "the session's own browser context",
  browser_wait: "the session's own browser context",
  browser_screenshot: "a file in the session's workspace",
  checkpoint_restore: "the turn's own workspace; offered only where a toolset list names it",
  browser_console: "the session's own browser context",
  browser_get_images: "the session's own browser context",
  browser_download: "a file in the session's workspace",
  browser_close: "the session's own browser context",
  text_to_speech: "a file in the workspace",
  image_generate: "files in the session's workspace, sent with the reply to the turn's own chat",
  execute_code:
    "a script in the session's workspace; each tool it calls is one of the turn's, run as a direct call (the owner rules apply to each)",
  load_tools: "loads tool schemas into the turn",
  mcp_list_resources: "reads the configured MCP servers' resources",
  mcp_read_resource: "reads the configured MCP servers' resources",
  mcp_get_prompt: "reads the configured MCP servers' prompts",
};

/** Herald's MCP server tools that only read. */
const MCP_READ_ONLY = ["sessions_list", "sessions_search", "session_read", "cron_list"];

/** What a path did: took effect, was refused (and changed nothing), or failed some other way. */
async function outcome(run: Promise<boolean>): Promise<string> {
  try {
    return (await run) ? "takes effect" : "refused";
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

// One gateway per kind of caller, side by side (the paths mostly wait on Telegram's per-chat pacing);
// within one, the paths run in order. Each test compares its whole row of the table at once.
describe.concurrent("the owner table", () => {
  for (const caller of CALLERS) {
    it(`${caller.name}: ${caller.owner ? "an owner" : "not an owner"}`, async () => {
      const rig = await startRig(caller.me, caller.env);
      try {
        if (caller.pair) await pair(rig);
        const expected: Record<string, string> = {};
        const observed: Record<string, string> = {};
        for (const [i, path] of PATHS.entries()) {
          const may = caller.owner || path.who === "everyone";
          expected[path.path] = may ? "takes effect" : "refused";
          observed[path.path] = await outcome(path.run(rig, `p${i}`));
        }
        expect(observed).toEqual(expected);
        // Nothing refused reached the other chats.
        if (!caller.owner)
          for (const chatId of [OTHER, HOME])
            expect(rig.fake.botMessages(chatId).map((m) => m.text)).toEqual([]);
      } finally {
        await rig.stop();
      }
    }, 180_000);
  }
});

describe("Herald's MCP server, the API server and webhooks", () => {
  const KEY = "owner-table-key-0123456789";
  const TOKEN = "alerts-token-0123456789abcdef";
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig(
      100,
      { TELEGRAM_ALLOWED_USERS: "100", API_SERVER_KEY: KEY, ALERTS_TOKEN: TOKEN },
      {
        configYaml: [
          "webhooks:",
          "  - name: alerts",
          "    auth: { type: bearer, token_env: ALERTS_TOKEN }",
          '    prompt: "Alert: {{text}}"',
          `    deliver: telegram:${HOME}`,
          "    toolsets: [messaging]",
        ].join("\n"),
      },
    );
  }, 30_000);
  afterAll(() => rig?.stop());

  const mcp = async (key: string): Promise<Client> => {
    const client = new Client({ name: "owner-table", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${rig.h.apiUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  };
  const texts = (chatId: number) => rig.fake.botMessages(chatId).map((m) => m.text);

  it("MCP send_message and cron_add: the key holder is the owner; without the key nothing is sent or made", async () => {
    await expect(mcp("not-the-key")).rejects.toThrow(/A valid API_SERVER_KEY is required/);
    const client = await mcp(KEY);
    try {
      const sent = (await client.callTool({
        name: "send_message",
        arguments: { chat: `telegram:${OTHER}`, text: "from MCP" },
      })) as CallToolResult;
      expect(sent.isError).toBeFalsy();
      await vi.waitFor(() => expect(texts(OTHER)).toEqual(["from MCP"]), { timeout: 10_000 });
      const added = (await client.callTool({
        name: "cron_add",
        arguments: { schedule: "every 2h", prompt: "x", deliver: `telegram:${OTHER}`, name: "mcp-job" },
      })) as CallToolResult;
      expect(added.isError).toBeFalsy();
      expect(jobsNamed(rig.h, "mcp-job")).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it("the API server's key holder is the owner: send_message reaches another chat", async () => {
    rig.model.plan("api", [
      { name: "send_message", arguments: { target: `telegram:${OTHER}`, text: "from the API" } },
    ]);
    expect((await chat(rig.h, "please [[api]]", { key: KEY })).text).toBe("done [[api]]");
    await vi.waitFor(() => expect(texts(OTHER)).toContain("from the API"), { timeout: 10_000 });
  });

  it("a webhook delivers where the owner configured: its payload names no target, its turn sends nowhere else", async () => {
    const before = texts(OTHER).length;
    rig.model.plan("hook", [
      { name: "send_message", arguments: { target: `telegram:${OTHER}`, text: "leak" } },
    ]);
    const body = JSON.stringify({
      text: "disk full [[hook]]",
      deliver: `telegram:${OTHER}`,
      target: "telegram",
    });
    const res = await fetch(`${rig.h.apiUrl}/webhooks/in/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body,
    });
    expect(res.status).toBe(202);
    await botSays(rig.fake, HOME, "done [[hook]]");
    await rig.h.gateway.runner.outbox.idle();
    expect(toolResults(rig.h, "hook")[0]).toMatch(/only the owner may send to another chat/);
    expect(texts(OTHER)).toHaveLength(before);
  });
});

describe("every registered path is in the table or declared as staying in the caller's chat", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig(100, { TELEGRAM_ALLOWED_USERS: "100" });
  }, 30_000);
  afterAll(() => rig?.stop());

  const covered = new Set(PATHS.flatMap((p) => p.covers));

  it("commands: the table's owner-only ones are declared `owner`; every other one is listed with why", () => {
    const { commands } = rig.h.gateway.runner;
    const unlisted = commands.names().filter((n) => !covered.has(n) && !(n in OWN_CHAT_COMMANDS));
    expect(unlisted, "add each to the owner table or to OWN_CHAT_COMMANDS").toEqual([]);
    // /usage answers everyone; its `all` is checked inside the command by the same policy.
    for (const path of commandPaths)
      for (const name of path.covers)
        expect(commands.get(name)?.access ?? "everyone").toBe(name === "usage" ? "everyone" : "owner");
  });

  it("tools: every tool turns may call (plugins' included) is in the table or listed with why", () => {
    const registry = rig.h.gateway.tools!;
    const names = registry.forToolsets(registry.toolsets()).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["send_message", "cronjob", "delegate_task", "probe_send"]));
    const unlisted = names.filter((n) => !covered.has(n) && !(n in OWN_CHAT_TOOLS));
    expect(unlisted, "add each to the owner table or to OWN_CHAT_TOOLS").toEqual([]);
  });

  it("MCP server tools: the ones that send or schedule are in the table, the rest only read", () => {
    const table = ["send_message", "cron_add"];
    expect([...MCP_TOOL_NAMES].sort()).toEqual([...table, ...MCP_READ_ONLY].sort());
  });
});
