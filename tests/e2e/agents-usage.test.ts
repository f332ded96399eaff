/**
 * Two agents in one gateway (the default Telegram bot, and a bot account routed to agent `family`),
 * over the wire: usage totals per agent on the dashboard (`?agent=`, the by-agent table) and from
 * `herald usage --agent` run as a process on the same state file; a plugin's session search sees
 * only the sessions of the agent of the chat it works in, also after `/agent` switched the chat.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/types.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, botSays } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let family: FakeTelegram | undefined;
const temps: string[] = [];
afterEach(async () => {
  await family?.close();
  family = undefined;
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const root = join(import.meta.dirname, "..", "..");

/** A plugin whose tool returns what `ctx.state.searchSessions` finds. */
const SEARCHER = `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [
    { name: "recall_probe", description: "search past conversations", parameters: z.object({ query: z.string() }),
      execute: async ({ query }, ctx) =>
        "found: " + (await ctx.state.searchSessions(query, { limit: 20 })).map((h) => h.snippet).join(" | ") },
  ],
});
`;

/** The gateway with the default bot and the `family` bot account routed to agent `family`. */
async function start() {
  const plugins = mkdtempSync(join(tmpdir(), "herald-agent-plugins-"));
  temps.push(plugins);
  mkdirSync(join(plugins, "searcher"));
  writeFileSync(
    join(plugins, "searcher", "plugin.json"),
    JSON.stringify({ name: "searcher", version: "1.0.0", capabilities: ["state"] }),
  );
  writeFileSync(join(plugins, "searcher", "index.js"), SEARCHER);
  const work = running.trackFake(await startFakeTelegram());
  family = await startFakeTelegram({ token: "7000000002:FAMILY-token_for_fake", username: "hearth_bot" });
  const configYaml = [
    "telegram:",
    "  accounts:",
    "    - name: family",
    `      api_root: ${family.url}`,
    "agents:",
    "  - name: family",
    "    toolsets: [core, memory, plugins]",
    "routes:",
    "  - agent: family",
    "    platform: telegram@family",
    "",
  ].join("\n");
  const env = {
    TELEGRAM_BOT_TOKEN: work.token,
    TELEGRAM_API_ROOT: work.url,
    TELEGRAM_FAMILY_BOT_TOKEN: family.token,
    TELEGRAM_ALLOWED_USERS: "111,222",
    GATEWAY_OWNERS: "telegram:111",
    HERALD_PLUGINS_DIR: plugins,
    HERALD_TOOLS_LAZY: "false",
    HERALD_LEARNING_ENABLED: "false",
  };
  const h = await running.startHarness({ configYaml, env });
  return { work, family, h, env };
}

/** `herald <args>` as a process on the harness's HERALD_HOME and config. */
async function herald(h: Harness, env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", join(root, "app", "cli.ts"), ...args],
    {
      env: {
        ...process.env,
        ...env,
        HERALD_HOME: h.homeDir,
        OPENAI_BASE_URL: h.llm.url,
        OPENAI_API_KEY: "test-key",
        HERALD_MODEL: "fake-model",
        HERALD_LOG_LEVEL: "silent",
      },
      cwd: root,
    },
  );
  return stdout;
}

const n = (v: number) => v.toLocaleString("en-US");
const toolResults = (r: FakeLlmRequest | undefined) =>
  (r?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));
const command = (text: string) => ({
  entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }],
});

describe("two agents: usage and plugins", () => {
  it("totals usage per agent on the dashboard and in `herald usage --agent`", async () => {
    const { work, family, h, env } = await start();
    work.userSends({ chatId: 111, fromId: 111, text: "hello work" });
    await botReplies(work, 111, 1);
    family.userSends({ chatId: 111, fromId: 111, text: "hello family, a longer message than the other" });
    await botReplies(family, 111, 1);
    family.userSends({ chatId: 111, fromId: 111, text: "and once more" });
    await botReplies(family, 111, 2);

    // Each agent's prompt tokens, as the model reported them for its turns (the ledger's own rows).
    const sessions = h.state.sessions.list({ limit: 10 });
    const tokensOf = (agent: string) =>
      sessions
        .filter((s) => (agent === "family") === s.key.startsWith("family/"))
        .flatMap((s) => h.state.usage.forSession(s.id))
        .reduce((a, l) => a + l.promptTokens, 0);
    const [ofWork, ofFamily] = [tokensOf("default"), tokensOf("family")];
    expect(ofWork).toBeGreaterThan(0);
    expect(ofFamily).toBeGreaterThan(0);
    expect(ofFamily).not.toBe(ofWork);

    const page = async (query: string) => {
      const res = await fetch(`${h.apiUrl}/dashboard/usage${query}`);
      expect(res.status).toBe(200);
      return res.text();
    };
    const cell = (v: number) => `<td class="num">${n(v)}</td>`;
    const all = await page("?since=all");
    expect(all).toContain('id="agent-filter"');
    const byAgent = all.slice(all.indexOf('id="usage-by-agent"'), all.indexOf('id="by-user"'));
    expect(byAgent).toContain(`<th scope="row">default</th><td>fake-model</td>${cell(ofWork)}`);
    expect(byAgent).toContain(`<th scope="row">family</th><td>fake-model</td>${cell(ofFamily)}`);
    const model = (html: string) => html.slice(html.indexOf('id="usage-by-model"'), html.indexOf("</table>"));
    expect(model(all)).toContain(cell(ofWork + ofFamily));
    const ofFamilyPage = await page("?since=7d&agent=family");
    expect(ofFamilyPage).toContain("By model of agent family");
    expect(model(ofFamilyPage)).toContain(cell(ofFamily));
    expect(ofFamilyPage).not.toContain('id="usage-by-agent"');
    // The period picker keeps the agent.
    expect(ofFamilyPage).toContain('<input type="hidden" name="agent" value="family">');
    expect(model(await page("?since=24h&agent=default"))).toContain(cell(ofWork));

    // The CLI reads the same state file while the gateway runs.
    const cliAll = await herald(h, env, "usage");
    expect(cliAll).toContain(`All usage by model, all time (3 model calls):`);
    expect(cliAll).toMatch(
      new RegExp(`By agent:\\n• default: ${n(ofWork)} in .*\\n• family: ${n(ofFamily)} in `),
    );
    const cliFamily = await herald(h, env, "usage", "--agent", "family", "--since", "7d");
    expect(cliFamily).toContain("All usage of agent family by model, last 7 days (2 model calls):");
    expect(cliFamily).toContain(`Total: ${n(ofFamily)} in`);
    expect(cliFamily).not.toContain("By agent:");
    expect(await herald(h, env, "usage", "--agent", "default")).toContain(`Total: ${n(ofWork)} in`);

    // The owner's /usage all in a chat has the same split.
    work.userSends({ chatId: 111, fromId: 111, text: "/usage all", extra: command("/usage all") });
    const [, answer] = await botReplies(work, 111, 2);
    expect(answer).toContain(`• family: ${n(ofFamily)} in`);
  }, 120_000);

  it("lets a plugin search only the sessions of the agent its chat talks to", async () => {
    const { work, h } = await start();
    work.userSends({ chatId: 111, fromId: 111, text: "my code word is pineapple" });
    await botReplies(work, 111, 1);
    work.userSends({ chatId: 111, fromId: 111, text: "/agent family", extra: command("/agent family") });
    expect((await botReplies(work, 111, 2))[1]).toContain("now talks to family");
    work.userSends({ chatId: 111, fromId: 111, text: "my code word is mango" });
    await botReplies(work, 111, 3);

    // The chat now talks to family: the plugin sees family's session, not the default agent's.
    h.llm.script(
      { toolCalls: [{ name: "recall_probe", arguments: { query: "code word" } }] },
      { text: "searched as family" },
    );
    work.userSends({ chatId: 111, fromId: 111, text: "search it now" });
    await botSays(work, 111, "searched as family");
    const [asFamily] = toolResults(h.llm.requests.at(-1));
    expect(asFamily).toContain("mango");
    expect(asFamily).not.toContain("pineapple");

    // Back to the default agent: the other way round.
    work.userSends({ chatId: 111, fromId: 111, text: "/agent default", extra: command("/agent default") });
    await vi.waitFor(
      () => expect(work.botMessages(111).some((m) => m.text?.includes("now talks to default"))).toBe(true),
      { timeout: 10_000 },
    );
    h.llm.script(
      { toolCalls: [{ name: "recall_probe", arguments: { query: "code word" } }] },
      { text: "searched as default" },
    );
    work.userSends({ chatId: 111, fromId: 111, text: "search it again" });
    await botSays(work, 111, "searched as default");
    const [asDefault] = toolResults(h.llm.requests.at(-1));
    expect(asDefault).toContain("pineapple");
    expect(asDefault).not.toContain("mango");
  });
});
