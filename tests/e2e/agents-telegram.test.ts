/**
 * Two agents in one gateway, over the wire: two Telegram bots (two fake Bot APIs, two tokens), the
 * second a bot account of the `telegram` section (`telegram.accounts`), routed to agent `family` with
 * its own SOUL.md, toolsets and memory; the default bot answers as the default agent (the top-level
 * config). The same user DMs both bots and gets two sessions; `/agent` shows and (owners) switches;
 * a cron job made in the family chat runs as `family` and is delivered by the family bot.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/types.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, botSays } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let family: FakeTelegram | undefined;
afterEach(async () => {
  await family?.close();
  family = undefined;
});

const WORK_SOUL = "You are Quill, the work assistant. Terse and precise.";
const FAMILY_SOUL = "You are Hearth, the family assistant. Warm and patient.";

/** The gateway with the default bot (work) and the `family` bot account routed to agent `family`. */
async function start(env: Record<string, string> = {}) {
  const work = running.trackFake(await startFakeTelegram());
  family = await startFakeTelegram({ token: "7000000002:FAMILY-token_for_fake", username: "hearth_bot" });
  const configYaml = [
    "telegram:",
    "  accounts:",
    "    - name: family",
    `      api_root: ${family.url}`,
    "agents:",
    "  - name: family",
    "    toolsets: [core, memory, cron]",
    "routes:",
    "  - agent: family",
    "    platform: telegram@family",
    "",
  ].join("\n");
  const h = await running.startHarness({
    configYaml,
    env: {
      TELEGRAM_BOT_TOKEN: work.token,
      TELEGRAM_API_ROOT: work.url,
      // The account's own token, by the account's variable.
      TELEGRAM_FAMILY_BOT_TOKEN: family.token,
      TELEGRAM_ALLOWED_USERS: "111,222",
      HERALD_TOOLS_LAZY: "false",
      HERALD_LEARNING_ENABLED: "false",
      ...env,
    },
  });
  writeFileSync(join(h.homeDir, "SOUL.md"), WORK_SOUL);
  mkdirSync(join(h.homeDir, "agents", "family"), { recursive: true });
  writeFileSync(join(h.homeDir, "agents", "family", "SOUL.md"), FAMILY_SOUL);
  return { work, family, h };
}

/** The model requests whose last user message is `text`. */
function requestsFor(h: Harness, text: string): FakeLlmRequest[] {
  return h.llm.requests.filter((r) => {
    const users = r.messages.filter((m) => m.role === "user");
    return JSON.stringify(users.at(-1)?.content ?? "").includes(text);
  });
}

const systemOf = (r: FakeLlmRequest) => String(r.messages[0]?.content ?? "");
const toolNames = (r: FakeLlmRequest) => (r.tools ?? []).map((t) => t.function.name).sort();
const command = (text: string) => ({
  entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }],
});

describe("two agents on two Telegram bots", () => {
  it("answers each bot with its own agent: SOUL.md, tools, and a session per bot for the same user", async () => {
    const { work, family, h } = await start();
    work.userSends({ chatId: 111, fromId: 111, text: "hello work" });
    family.userSends({ chatId: 111, fromId: 111, text: "hello family" });
    expect(await botReplies(work, 111, 1)).toEqual(["echo: hello work"]);
    expect(await botReplies(family, 111, 1)).toEqual(["echo: hello family"]);

    const [w] = requestsFor(h, "hello work");
    const [f] = requestsFor(h, "hello family");
    expect(systemOf(w!)).toContain("Quill");
    expect(systemOf(w!)).not.toContain("Hearth");
    expect(systemOf(f!)).toContain("Hearth");
    expect(systemOf(f!)).not.toContain("Quill");
    expect(toolNames(w!)).toContain("send_message");
    expect(toolNames(f!)).toContain("memory");
    expect(toolNames(f!)).toContain("cronjob");
    expect(toolNames(f!)).not.toContain("send_message");

    // The same user in the same DM id of each bot: two sessions, neither sees the other's messages.
    work.userSends({ chatId: 111, fromId: 111, text: "what did I say?" });
    expect(await botReplies(work, 111, 2)).toEqual(["echo: hello work", "echo: what did I say?"]);
    const [again] = requestsFor(h, "what did I say?");
    expect(JSON.stringify(again!.messages)).toContain("hello work");
    expect(JSON.stringify(again!.messages)).not.toContain("hello family");
    const keys = h.state.sessions
      .list({ limit: 10 })
      .map((s) => s.key)
      .sort();
    // The default bot and agent keep today's key; the family bot's account and agent are in its own.
    expect(keys).toEqual(["family/telegram@family:dm:111", "telegram:dm:111"]);

    // The dashboard's sessions page shows one agent's sessions apart.
    const page = async (query: string) => {
      const res = await fetch(`${h.apiUrl}/dashboard/sessions${query}`);
      expect(res.status).toBe(200);
      return res.text();
    };
    const all = await page("");
    expect(all).toContain('id="agent-filter"');
    expect(all).toContain("family/telegram@family:dm:111");
    expect(all).toContain(">telegram:dm:111<");
    const ofFamily = await page("?agent=family");
    expect(ofFamily).toContain("family/telegram@family:dm:111");
    expect(ofFamily).not.toContain(">telegram:dm:111<");
    const ofDefault = await page("?agent=default");
    expect(ofDefault).toContain("telegram:dm:111");
    expect(ofDefault).not.toContain("family/telegram@family:dm:111");
  });

  it("keeps each agent's memory its own", async () => {
    const { work, family, h } = await start();
    h.llm.script(
      {
        toolCalls: [
          { name: "memory", arguments: { action: "add", target: "user", content: "Loves plum jam" } },
        ],
      },
      { text: "Noted." },
    );
    family.userSends({ chatId: 111, fromId: 111, text: "remember I love plum jam" });
    await botSays(family, 111, "Noted.");
    expect(readFileSync(join(h.homeDir, "agents", "family", "memories", "USER.md"), "utf8")).toContain(
      "plum jam",
    );

    // The work agent's prompt never holds it; the family agent's next session does.
    work.userSends({ chatId: 111, fromId: 111, text: "what do I love?" });
    await botReplies(work, 111, 1);
    expect(systemOf(requestsFor(h, "what do I love?")[0]!)).not.toContain("plum jam");
    family.userSends({ chatId: 111, fromId: 111, text: "/new", extra: command("/new") });
    await botReplies(family, 111, 2);
    family.userSends({ chatId: 111, fromId: 111, text: "and what now?" });
    await botSays(family, 111, "echo: and what now?");
    expect(systemOf(requestsFor(h, "and what now?")[0]!)).toContain("plum jam");
  });

  it("/agent shows the agent; an owner switches the chat to a fresh session of another, a non-owner cannot", async () => {
    const { work, h } = await start({ GATEWAY_OWNERS: "telegram:111" });
    work.userSends({ chatId: 111, fromId: 111, text: "/agent", extra: command("/agent") });
    expect((await botReplies(work, 111, 1))[0]).toContain("Agent here: default");

    work.userSends({ chatId: 222, fromId: 222, text: "/agent family", extra: command("/agent family") });
    expect((await botReplies(work, 222, 1))[0]).toContain("Only an owner");

    work.userSends({ chatId: 111, fromId: 111, text: "/agent family", extra: command("/agent family") });
    expect((await botReplies(work, 111, 2))[1]).toContain("now talks to family");
    work.userSends({ chatId: 111, fromId: 111, text: "who are you now?" });
    await botSays(work, 111, "echo: who are you now?");
    const [switched] = requestsFor(h, "who are you now?");
    expect(systemOf(switched!)).toContain("Hearth");
    expect(JSON.stringify(switched!.messages)).not.toContain("/agent");
    work.userSends({ chatId: 111, fromId: 111, text: "/agent", extra: command("/agent") });
    expect((await botReplies(work, 111, 4))[3]).toContain("Agent here: family (chosen with /agent)");

    // The choice outlives a restart; the other user's chat is still the default agent's.
    await h.restart();
    work.userSends({ chatId: 222, fromId: 222, text: "/agent", extra: command("/agent") });
    expect((await botReplies(work, 222, 2))[1]).toContain("Agent here: default");
    work.userSends({ chatId: 111, fromId: 111, text: "still you?" });
    await botSays(work, 111, "echo: still you?");
    expect(systemOf(requestsFor(h, "still you?")[0]!)).toContain("Hearth");
  });

  it("runs a cron job of the family agent as that agent and delivers it with the family bot", async () => {
    const { work, family, h } = await start();
    h.llm.script(
      {
        toolCalls: [
          {
            name: "cronjob",
            arguments: { action: "create", schedule: "every 1h", prompt: "water the plants" },
          },
        ],
      },
      { text: "Scheduled." },
    );
    family.userSends({ chatId: 111, fromId: 111, text: "remind me hourly to water the plants" });
    await botSays(family, 111, "Scheduled.");
    // The job is the family agent's, made in the family bot's chat: listed there, not in the work bot's.
    const chat = { platform: "telegram@family", chatId: "111" };
    const [job] = await h.gateway.cron.api.list({ chat, userId: "111", agent: "family" });
    expect(job?.prompt).toBe("water the plants");
    const elsewhere = await h.gateway.cron.api.list({
      chat: { platform: "telegram", chatId: "111" },
      userId: "111",
    });
    expect(elsewhere).toEqual([]);

    h.llm.script({ text: "Time to water the plants." });
    await h.gateway.cron.tick(job!.nextRunAt!);
    await botSays(family, 111, "Time to water the plants.");
    const sent = family.callsTo("sendMessage", 111).find((c) => String(c.params["text"]).includes("water"));
    expect(sent?.status).toBe(200);
    expect(work.callsTo("sendMessage")).toHaveLength(0);
    const [run] = requestsFor(h, "water the plants").filter(
      (r) => !JSON.stringify(r.messages).includes("remind me"),
    );
    expect(systemOf(run!)).toContain("Hearth");
    await vi.waitFor(
      async () =>
        expect(
          (await h.gateway.cron.api.list({ chat, userId: "111", agent: "family" }))[0]?.lastRun?.status,
        ).toBe("ok"),
      { timeout: 10_000 },
    );
  });
});
