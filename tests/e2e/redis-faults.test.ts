/**
 * Faults of a scaled-out deployment, with real processes: a `herald gateway` talking to the fake
 * Telegram Bot API, `herald worker` processes, a private Redis, the fake model. A worker killed with
 * SIGKILL mid-turn, a Redis restart mid-run and a gateway killed while a worker finishes: every user
 * gets exactly one reply per message.
 */
import { expect, it } from "vitest";
import { BullJobQueue } from "../../agent/queue/bull-job-queue.js";
import { silentLogger } from "../../core/logger.js";
import type { FakeLlm } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { clusterPerTest, lastUser, type TelegramCluster } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

/** A cluster whose gateway lets every Telegram user in. */
const start = (lockDurationMs?: number): Promise<TelegramCluster> =>
  cluster.start({ allowedUsers: false, gatewayEnv: { GATEWAY_ALLOW_ALL_USERS: "true" }, lockDurationMs });

/** Waits for `count` bot messages in a chat and returns their texts. */
async function replies(c: HeraldCluster, tg: FakeTelegram, chatId: number, count: number): Promise<string[]> {
  await eventually(
    () => tg.botMessages(chatId).length >= count,
    () => `chat ${chatId} has ${tg.botMessages(chatId).length} of ${count} replies:\n${c.output()}`,
  );
  return tg.botMessages(chatId).map((m) => m.text ?? "");
}

/** Runs of each user text the model saw. */
function runs(model: FakeLlm): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of model.requests) {
    const text = lastUser(r.messages);
    out.set(text, (out.get(text) ?? 0) + 1);
  }
  return out;
}

it("runs the turn of a worker killed with SIGKILL on another worker, and the user gets one reply", async () => {
  // Short locks so the dead worker's turn comes back within seconds.
  const { c, tg, model } = await start(2_000);
  let first = true;
  model.setDefault((request) => {
    const text = lastUser(request.messages);
    if (text === "what is 6 x 7?" && first) {
      first = false;
      return { text: "never sent", delayMs: 60_000 };
    }
    return { text: text === "what is 6 x 7?" ? "42" : `echo: ${text}` };
  });
  const workers = [await c.startWorker("wa"), await c.startWorker("wb")];
  tg.userSends({ chatId: 111, fromId: 111, text: "what is 6 x 7?" });
  await model.waitForRequests(1);
  const victim = workers.find((w) => w.name === `worker ${model.requests[0]!.model}`)!;
  await c.kill(victim);

  expect(await replies(c, tg, 111, 1)).toEqual(["42"]);
  expect(model.requests).toHaveLength(2);
  expect(model.requests[1]!.model).not.toBe(model.requests[0]!.model);
  // The next message is answered after it, with nothing in between: no second reply to the first.
  tg.userSends({ chatId: 111, fromId: 111, text: "thanks" });
  expect(await replies(c, tg, 111, 2)).toEqual(["42", "echo: thanks"]);
  expect(c.answers("telegram:dm:111")).toEqual(["42", "echo: thanks"]);
}, 60_000);

it("hands the turn of a worker stopped with SIGTERM to another worker at once", async () => {
  // Locks far longer than the test may take: only the hand-back can let the other worker run it.
  const { c, tg, model } = await start(120_000);
  let first = true;
  model.setDefault((request) => {
    const text = lastUser(request.messages);
    if (first) {
      first = false;
      return { text: "never sent", delayMs: 60_000 };
    }
    return { text: `answer to ${text}` };
  });
  const workers = [await c.startWorker("wa"), await c.startWorker("wb")];
  tg.userSends({ chatId: 111, fromId: 111, text: "deploy status?" });
  await model.waitForRequests(1);
  const stopping = workers.find((w) => w.name === `worker ${model.requests[0]!.model}`)!;
  await stopping.kill("SIGTERM");
  expect(stopping.child.exitCode).toBe(0);
  expect(await replies(c, tg, 111, 1)).toEqual(["answer to deploy status?"]);
  expect(model.requests.map((r) => r.model)).toEqual([model.requests[0]!.model, model.requests[1]!.model]);
  expect(model.requests[1]!.model).not.toBe(model.requests[0]!.model);
}, 30_000);

it("answers every message once across a Redis restart, including those sent while it restarts", async () => {
  const { c, tg, model } = await start();
  model.setDefault((request) => ({ text: `answer to ${lastUser(request.messages)}`, delayMs: 300 }));
  await c.startWorker("wa", 2);
  await c.startWorker("wb", 2);
  const chats = [201, 202, 203, 204, 205, 206];
  for (const chatId of chats.slice(0, 4))
    tg.userSends({ chatId, fromId: chatId, text: `question ${chatId}` });
  await model.waitForRequests(2);
  await Promise.all([
    redis.restart(),
    (async () => {
      for (const chatId of chats.slice(4))
        tg.userSends({ chatId, fromId: chatId, text: `question ${chatId}` });
    })(),
  ]);
  for (const chatId of chats)
    expect(await replies(c, tg, chatId, 1)).toEqual([`answer to question ${chatId}`]);
  // Nothing more arrives for them: each chat's next message is its second reply.
  for (const chatId of chats) tg.userSends({ chatId, fromId: chatId, text: `again ${chatId}` });
  for (const chatId of chats) {
    expect(await replies(c, tg, chatId, 2)).toEqual([
      `answer to question ${chatId}`,
      `answer to again ${chatId}`,
    ]);
  }
  const counted = runs(model);
  for (const chatId of chats) expect(counted.get(`question ${chatId}`)).toBe(1);
  expect((await c.health()).queue.workers).toBe(2);
}, 90_000);

it("delivers once the result a worker finished while the gateway was down", async () => {
  const { c, tg, model } = await start();
  model.setDefault((request) => ({ text: `answer to ${lastUser(request.messages)}`, delayMs: 800 }));
  await c.startWorker("wa");
  tg.userSends({ chatId: 111, fromId: 111, text: "slow question" });
  await model.waitForRequests(1);
  await c.kill(c.gateway!);

  // The worker finishes while no gateway listens.
  const probe = new BullJobQueue({ logger: silentLogger(), connection: redis.url, prefix: c.prefix });
  try {
    for (;;) {
      const stats = await probe.stats();
      if (stats.active === 0 && stats.waiting === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await probe.close();
  }
  expect(tg.botMessages(111)).toEqual([]);

  await c.startGateway();
  expect(await replies(c, tg, 111, 1)).toEqual(["answer to slow question"]);
  tg.userSends({ chatId: 111, fromId: 111, text: "thanks" });
  expect(await replies(c, tg, 111, 2)).toEqual(["answer to slow question", "answer to thanks"]);
  // The restarted gateway offered the turn again and got the stored result: it did not run twice.
  expect(runs(model).get("slow question")).toBe(1);
}, 60_000);
