/**
 * Herald as an MCP server, driven by the SDK's own Client: over streamable HTTP at /mcp on the API
 * server (behind API_SERVER_KEY), and over stdio through `herald mcp serve` bridging to that gateway.
 * Sessions are listed, searched and read; a message reaches a chat once (idempotency key); cron jobs are
 * added and listed.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

const KEY = "mcp-test-key-0123456789";
const cli = join(import.meta.dirname, "../../app/cli.ts");

let harness: Harness | undefined;
let client: Client | undefined;
let fakechat: FakeChatAdapter;
afterEach(async () => {
  await client?.close();
  await harness?.stop();
  client = harness = undefined;
});

async function start(): Promise<Harness> {
  harness = await startHarness({
    env: { API_SERVER_KEY: KEY },
    adapters: () => {
      fakechat = new FakeChatAdapter();
      return [fakechat];
    },
  });
  return harness;
}

const text = (result: unknown): string =>
  ((result as CallToolResult).content[0] as { type: "text"; text: string }).text;

async function httpClient(h: Harness, key = KEY): Promise<Client> {
  const c = new Client({ name: "test", version: "1.0.0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${h.apiUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}

/** The tools every transport must serve, exercised the same way. */
async function exercise(h: Harness, c: Client): Promise<void> {
  const tools = (await c.listTools()).tools.map((t) => t.name).sort();
  expect(tools).toEqual([
    "cron_add",
    "cron_list",
    "send_message",
    "session_read",
    "sessions_list",
    "sessions_search",
  ]);

  h.llm.script({ text: "The kiwi harvest starts in March." });
  const asked = await chat(h, "when does the kiwi harvest start?", { key: KEY });
  const listed = JSON.parse(text(await c.callTool({ name: "sessions_list", arguments: {} }))) as {
    id: string;
    key: string;
  }[];
  // The API server's session header is its chat id: the session's key holds it.
  const session = listed.find((s) => s.key.endsWith(`:${asked.sessionId}`));
  expect(session).toBeDefined();
  const id = session!.id;

  const hits = JSON.parse(
    text(await c.callTool({ name: "sessions_search", arguments: { query: "kiwi" } })),
  ) as {
    session_id: string;
  }[];
  expect(hits.map((hit) => hit.session_id)).toContain(id);

  const read = text(await c.callTool({ name: "session_read", arguments: { id } }));
  expect(read).toContain("user: when does the kiwi harvest start?");
  expect(read).toContain("assistant: The kiwi harvest starts in March.");
  const missing = (await c.callTool({ name: "session_read", arguments: { id: "nope" } })) as CallToolResult;
  expect(missing.isError).toBe(true);
  expect(text(missing)).toMatch(/no session nope/);

  // Exactly once: a retried call with the same key sends nothing more.
  const send = { chat: "fakechat:room-1", text: "deploy finished", idempotency_key: "deploy-42" };
  expect(text(await c.callTool({ name: "send_message", arguments: send }))).toMatch(
    /^Queued for fakechat:room-1/,
  );
  expect(text(await c.callTool({ name: "send_message", arguments: send }))).toMatch(/^Already sent/);
  expect(await fakechat.waitForTexts(1)).toEqual(["deploy finished"]);
  const offline = (await c.callTool({
    name: "send_message",
    arguments: { chat: "telegram:1", text: "hi" },
  })) as CallToolResult;
  expect(offline.isError).toBe(true);
  expect(text(offline)).toMatch(/not running on telegram/);

  const added = JSON.parse(
    text(
      await c.callTool({
        name: "cron_add",
        arguments: {
          schedule: "every 2h",
          prompt: "summarise the news",
          deliver: "fakechat:room-1",
          name: "news",
        },
      }),
    ),
  ) as { id: string };
  const jobs = JSON.parse(text(await c.callTool({ name: "cron_list", arguments: {} }))) as {
    id: string;
    name: string;
  }[];
  expect(jobs).toContainEqual(expect.objectContaining({ id: added.id, name: "news" }));
  const origin = (await c.callTool({
    name: "cron_add",
    arguments: { schedule: "every 2h", prompt: "x", deliver: "origin" },
  })) as CallToolResult;
  expect(origin.isError).toBe(true);
  expect(fakechat.sent).toHaveLength(1);
}

describe("herald as an MCP server", () => {
  it("serves its tools over streamable HTTP at /mcp behind API_SERVER_KEY", async () => {
    const h = await start();
    client = await httpClient(h);
    await exercise(h, client);
  });

  it("refuses /mcp without the right key", async () => {
    const h = await start();
    await expect(httpClient(h, "wrong")).rejects.toThrow(/401|API_SERVER_KEY/);
    const res = await fetch(`${h.apiUrl}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
  });

  it("serves the same tools on stdio through `herald mcp serve`", async () => {
    const h = await start();
    client = new Client({ name: "editor", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", cli, "mcp", "serve"],
        env: {
          ...(process.env as Record<string, string>),
          HERALD_HOME: h.homeDir,
          API_SERVER_KEY: KEY,
          HERALD_GATEWAY_URL: h.apiUrl,
        },
        stderr: "inherit",
      }),
    );
    await exercise(h, client);
  });

  it("`herald mcp serve` says how to fix a missing key or a stopped gateway", async () => {
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", cli, "mcp", "serve"], {
          env: { ...process.env, HERALD_HOME: "/nonexistent-herald-home", ...env },
          stdio: ["pipe", "pipe", "pipe"],
        });
        let err = "";
        child.stderr.on("data", (d: Buffer) => {
          err += d.toString();
        });
        child.once("exit", (code) => resolve({ code, err }));
      });
    const noKey = await run({ API_SERVER_KEY: "" });
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/API_SERVER_KEY.*not set/);
    const nothing = await run({ API_SERVER_KEY: KEY, HERALD_GATEWAY_URL: "http://127.0.0.1:9" });
    expect(nothing.code).toBe(1);
    expect(nothing.err).toMatch(
      /There is no \S+state\.db and no gateway at http:\/\/127\.0\.0\.1:9: start Herald/,
    );
  });

  it("serves sessions read-only from state.db while the gateway is stopped, and says what needs it", async () => {
    const h = await start();
    h.llm.script({ text: "Noted about the kiwis." });
    await chat(h, "remember the kiwis", { key: KEY });
    await h.crash();
    client = new Client({ name: "editor", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", cli, "mcp", "serve"],
        env: {
          ...(process.env as Record<string, string>),
          HERALD_HOME: h.homeDir,
          API_SERVER_KEY: KEY,
          HERALD_GATEWAY_URL: "http://127.0.0.1:9",
        },
        stderr: "ignore",
      }),
    );
    const hits = JSON.parse(
      text(await client.callTool({ name: "sessions_search", arguments: { query: "kiwis" } })),
    ) as unknown[];
    expect(hits.length).toBeGreaterThan(0);
    const send = (await client.callTool({
      name: "send_message",
      arguments: { chat: "fakechat:room-1", text: "hi" },
    })) as CallToolResult;
    expect(send.isError).toBe(true);
    expect(text(send)).toMatch(
      /gateway is not running, so nothing can be sent\. Start it with `herald gateway`/,
    );
  });
});
