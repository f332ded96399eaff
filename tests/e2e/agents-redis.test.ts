/**
 * Two agents with the turns on a worker: real `herald gateway` and `herald worker` processes on a
 * private Redis, two Telegram bots (two fake Bot APIs) on the gateway, the second routed to agent
 * `family`. Each bot's chat gets its agent's SOUL.md, built by the gateway and run by the worker; what
 * one agent writes to memory the other never sees; Mem0 keeps each agent's exchanges under its own
 * `agent_id`, and the worker's note (asked through the gateway's state API) holds only its agent's; a
 * cron job of `family` runs on the worker as `family` and is delivered by the family bot.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { userPeerId } from "../../agent/tools/memory-providers/ids.js";
import { type FakeLlm, type FakeLlmRequest, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeMem0, startFakeMem0 } from "../fakes/mem0/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { eventually, HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;
let mem0: FakeMem0 | undefined;
let bots: FakeTelegram[] = [];

afterEach(async () => {
  await cluster?.stop();
  await Promise.all([llm?.close(), mem0?.close(), ...bots.map((b) => b.close())]);
  cluster = llm = mem0 = undefined;
  bots = [];
});

const WORK_SOUL = "You are Quill, the work assistant. Terse and precise.";
const FAMILY_SOUL = "You are Hearth, the family assistant. Warm and patient.";

const CONFIG = [
  "memory:",
  "  providers:",
  "    insights_ttl_s: 0",
  "telegram:",
  "  accounts:",
  "    - name: family",
  "agents:",
  "  - name: family",
  "    toolsets: [core, memory, cron]",
  "routes:",
  "  - agent: family",
  "    platform: telegram@family",
  "",
].join("\n");

/** The model requests whose last user message contains `text`. */
function requestsFor(text: string): FakeLlmRequest[] {
  return llm!.requests.filter((r) => {
    const users = r.messages.filter((m) => m.role === "user");
    return JSON.stringify(users.at(-1)?.content ?? "").includes(text);
  });
}

const systemOf = (r: FakeLlmRequest | undefined) => String(r?.messages[0]?.content ?? "");

/**
 * User 111 sends `text` to `bot`; waits until the bot sent something new (and `expected`, when given)
 * and returns what it sent since (tool progress lines included).
 */
async function ask(bot: FakeTelegram, text: string, expected?: string): Promise<string[]> {
  // By message id: a tool's progress line is deleted after its turn, so counts shrink.
  const seen = new Set(bot.botMessages(111).map((m) => m.message_id));
  const since = () =>
    bot
      .botMessages(111)
      .filter((m) => !seen.has(m.message_id))
      .map((m) => m.text ?? "");
  // A command comes with its entity, as Telegram marks it.
  const extra = text.startsWith("/")
    ? { entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }] }
    : undefined;
  bot.userSends({ chatId: 111, fromId: 111, text, ...(extra ? { extra } : {}) });
  await eventually(
    () => since().length > 0 && (expected === undefined || since().includes(expected)),
    () => `after "${text}" the bot sent ${JSON.stringify(since())}:\n${cluster!.output()}`,
  );
  return since();
}

/** The gateway with both bots, one worker with the same config.yaml, and Mem0 on its fake. */
async function start() {
  llm = await startFakeLlm();
  mem0 = await startFakeMem0({ apiKey: "mk" });
  const work = await startFakeTelegram();
  const family = await startFakeTelegram({
    token: "7000000002:FAMILY-token_for_fake",
    username: "hearth_bot",
  });
  bots = [work, family];
  cluster = new HeraldCluster({
    redisUrl: redis.url,
    llmUrl: llm.url,
    gatewayEnv: {
      TELEGRAM_BOT_TOKEN: work.token,
      TELEGRAM_API_ROOT: work.url,
      TELEGRAM_FAMILY_BOT_TOKEN: family.token,
      TELEGRAM_FAMILY_API_ROOT: family.url,
      TELEGRAM_ALLOWED_USERS: "111",
      MEM0_URL: mem0.url,
      MEM0_API_KEY: "mk",
    },
  });
  writeFileSync(join(cluster.home, "config.yaml"), CONFIG);
  writeFileSync(join(cluster.home, "SOUL.md"), WORK_SOUL);
  mkdirSync(join(cluster.home, "agents", "family"), { recursive: true });
  writeFileSync(join(cluster.home, "agents", "family", "SOUL.md"), FAMILY_SOUL);
  await cluster.startGateway();
  // The worker reads the same config.yaml (an operator ships one file); it holds no bot token nor key.
  const workerHome = join(cluster.home, "worker");
  mkdirSync(workerHome, { recursive: true });
  writeFileSync(join(workerHome, "config.yaml"), CONFIG);
  // Its model name marks the model requests it sends.
  await cluster.startWorker("on-the-worker", 1, { home: workerHome, env: { MEM0_URL: mem0.url } });
  return { work, family, cluster };
}

describe("two agents with the turns on a Redis worker", () => {
  it("answers each bot as its agent, keeps memory and provider records apart, and runs the family cron job as family", {
    timeout: 180_000,
  }, async () => {
    const { work, family, cluster } = await start();
    expect((await cluster.health()).queue.workers).toBe(1);

    // Each bot's chat is its agent's: SOUL.md in the system prompt of the worker's request.
    expect(await ask(work, "hello work, the server password is swordfish")).toEqual([
      "echo: hello work, the server password is swordfish",
    ]);
    expect(await ask(family, "hello family, we adopted a kitten")).toEqual([
      "echo: hello family, we adopted a kitten",
    ]);
    const [w] = requestsFor("hello work");
    const [f] = requestsFor("hello family");
    expect(systemOf(w)).toContain("Quill");
    expect(systemOf(w)).not.toContain("Hearth");
    expect(systemOf(f)).toContain("Hearth");
    expect(systemOf(f)).not.toContain("Quill");
    // Each agent's session holds its own exchange.
    expect(cluster.answers("family/telegram@family:dm:111")).toEqual([
      "echo: hello family, we adopted a kitten",
    ]);
    expect(cluster.answers("telegram:dm:111")).toEqual([
      "echo: hello work, the server password is swordfish",
    ]);

    // Mem0: each agent's exchange under its own agent_id; the family note (fetched by the worker through
    // the gateway) holds what the user told family, never what they told the work agent.
    const alice = userPeerId("telegram", "111");
    // The family bot's chats are `telegram@family`: the same person is a user of that account there.
    const aliceOfFamily = userPeerId("telegram@family", "111");
    const ofAgent = (id: string, user = alice) =>
      mem0!.memories.filter((m) => m.user_id === user && m.agent_id === id).map((m) => m.memory);
    await eventually(
      () => ofAgent("herald").length === 1 && ofAgent("herald-family", aliceOfFamily).length === 1,
      () => `Mem0 holds ${JSON.stringify(mem0!.memories)}`,
    );
    expect(ofAgent("herald")).toEqual(["hello work, the server password is swordfish"]);
    expect(ofAgent("herald-family", aliceOfFamily)).toEqual(["hello family, we adopted a kitten"]);
    await ask(family, "any news from home?", "echo: any news from home?");
    // The note: a system message after the prompt (the session's own history aside).
    const familyNote = (requestsFor("any news from home?")[0]?.messages ?? [])
      .slice(1)
      .filter((m) => m.role === "system")
      .map((m) => String(m.content))
      .join("\n");
    expect(familyNote).toContain("From mem0:");
    expect(familyNote).toContain("adopted a kitten");
    expect(familyNote).not.toContain("swordfish");

    // Memory written by family (the worker's memory tool, through the gateway) is family's alone.
    llm!.script(
      {
        toolCalls: [
          { name: "memory", arguments: { action: "add", target: "user", content: "Loves plum jam" } },
        ],
      },
      { text: "Noted." },
    );
    await ask(family, "remember I love plum jam", "Noted.");
    expect(readFileSync(join(cluster.home, "agents", "family", "memories", "USER.md"), "utf8")).toContain(
      "plum jam",
    );
    await ask(work, "/new");
    await ask(work, "what do I love?", "echo: what do I love?");
    expect(systemOf(requestsFor("what do I love?")[0])).not.toContain("plum jam");
    await ask(family, "/new");
    await ask(family, "and what now?", "echo: and what now?");
    expect(systemOf(requestsFor("and what now?")[0])).toContain("plum jam");

    // A cron job made in the family chat: created and run now by the worker's tool, its run a family
    // turn on the worker, delivered by the family bot.
    const jobId = () => {
      const row = cluster
        .state()
        .database.prepare("SELECT id FROM cron_jobs ORDER BY created_at DESC LIMIT 1")
        .get() as { id: string } | undefined;
      return row?.id ?? "none";
    };
    llm!.script(
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
    await ask(family, "remind me hourly to water the plants", "Scheduled.");
    // The job's run (its prompt the last user message, none of the chat's history) and the chat's
    // own next step may reach the model in either order.
    const isRun = (r: FakeLlmRequest) =>
      JSON.stringify(r.messages.at(-1)).includes("water the plants") &&
      !JSON.stringify(r.messages).includes("remind me");
    const answer = (r: FakeLlmRequest) => ({
      text: isRun(r) ? "Time to water the plants." : "Running it now.",
    });
    llm!.script(
      () => ({ toolCalls: [{ name: "cronjob", arguments: { action: "run", id: jobId() } }] }),
      answer,
      answer,
    );
    const sent = await ask(family, "run the reminder now", "Time to water the plants.");
    await eventually(
      () => family.botMessages(111).some((m) => m.text === "Running it now."),
      () => `the family bot sent ${JSON.stringify(sent)}`,
    );
    const run = llm!.requests.find(isRun);
    expect(systemOf(run)).toContain("Hearth");
    expect(systemOf(run)).toContain("plum jam");
    expect(work.botMessages(111).map((m) => m.text)).not.toContain("Time to water the plants.");
    // Every model request, the job's run included, came from the worker.
    expect(new Set(llm!.requests.map((r) => r.model))).toEqual(new Set(["on-the-worker"]));
  });
});
