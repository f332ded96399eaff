/**
 * Scale-out on Redis with real processes: one `herald gateway` and four `herald worker` processes on a
 * private Redis, the scripted fake model in this process. Interleaved sessions keep their order and
 * never run two turns at once, whichever workers take them; /health and /metrics report what ran.
 */
import { afterEach, expect, it } from "vitest";
import { BullJobQueue } from "../../agent/queue/bull-job-queue.js";
import { silentLogger } from "../../core/logger.js";
import type { QueueEvent, TurnJob } from "../../core/turn.js";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { eventually, HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;
let queue: BullJobQueue | undefined;

afterEach(async () => {
  await queue?.close();
  await cluster?.stop();
  await llm?.close();
  queue = undefined;
  cluster = undefined;
  llm = undefined;
});

async function post(url: string, sessionId: string, text: string): Promise<string> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-herald-session-id": sessionId },
    body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body.choices![0]!.message.content;
}

const lastUser = (messages: { role: string }[]) =>
  messageText([...messages].reverse().find((m) => m.role === "user") as never);

it("keeps each session's turns in arrival order, one at a time, across 4 worker processes", async () => {
  llm = await startFakeLlm();
  // Queue-level jobs (`k<key>/<n>`) are timed; chat turns answer with how many answers they saw.
  const DELAY_MS = 120;
  const queueRuns = new Map<string, { n: number; at: number }[]>();
  llm.setDefault((request) => {
    const text = lastUser(request.messages);
    const direct = /^(k\d)\/(\d)$/.exec(text);
    if (direct) {
      const runs = queueRuns.get(direct[1]!) ?? [];
      runs.push({ n: Number(direct[2]), at: performance.now() });
      queueRuns.set(direct[1]!, runs);
      return { text: `done ${text}`, delayMs: DELAY_MS };
    }
    const seen = request.messages.filter((m) => m.role === "assistant").length;
    return { text: `${text} after ${seen}`, delayMs: 100 };
  });
  cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url });
  await cluster.startGateway();
  await Promise.all(["w0", "w1", "w2", "w3"].map((model) => cluster!.startWorker(model, 2)));
  const c = cluster;

  // Six sessions at once; in each, a message is sent only once the previous one is recorded, so the
  // arrival order is known, and the next ones wait in the journal while the first runs.
  const SESSIONS = 6;
  const TURNS = 3;
  const replies = new Map<string, Promise<string>[]>();
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      const sid = `ord${s}x`;
      const key = `api:dm:${sid}`;
      const pending: Promise<string>[] = [];
      replies.set(sid, pending);
      for (let k = 0; k < TURNS; k++) {
        const text = `${sid}-m${k}`;
        const reply = post(c.url, sid, text);
        reply.catch(() => undefined);
        pending.push(reply);
        await eventually(
          () =>
            c
              .state()
              .turns.openTurns(key)
              .some((t) => t.input === text) || c.answers(key).some((a) => a.startsWith(`${text} `)),
          () => `${text} was never recorded:\n${c.output()}`,
        );
      }
    }),
  );
  for (const [sid, pending] of replies) {
    // Turn k saw exactly the k answers before it: it started after the previous turn was committed.
    expect(await Promise.all(pending)).toEqual(
      Array.from({ length: TURNS }, (_, k) => `${sid}-m${k} after ${k}`),
    );
    expect(c.answers(`api:dm:${sid}`)).toEqual(
      Array.from({ length: TURNS }, (_, k) => `${sid}-m${k} after ${k}`),
    );
    const started = llm.requests.map((r) => lastUser(r.messages)).filter((t) => t.startsWith(`${sid}-`));
    expect(started).toEqual(Array.from({ length: TURNS }, (_, k) => `${sid}-m${k}`));
  }
  // The turns were spread over the worker processes (each asks for its own model name).
  expect(new Set(llm.requests.map((r) => r.model)).size).toBeGreaterThanOrEqual(2);

  // The queue's own guarantee, without the gateway's ordering in front of it: jobs of four keys
  // enqueued interleaved, all at once, into the same Redis queue the workers consume.
  queue = new BullJobQueue({ logger: silentLogger(), connection: redis.url, prefix: c.prefix });
  const completed = new Set<string>();
  queue.subscribe((e: QueueEvent) => {
    if (e.type === "completed" && e.jobId.startsWith("q-")) completed.add(e.jobId);
  });
  const keys = ["k0", "k1", "k2", "k3"];
  for (let n = 0; n < 4; n++) {
    for (const key of keys) {
      const id = `q-${key}-${n}`;
      await queue.enqueue(job(id, `${key}/${n}`), { id, orderingKey: `queue-test:${key}` });
    }
  }
  await eventually(
    () => completed.size === 16,
    () => `only ${completed.size} of 16 queue jobs completed:\n${c.output()}`,
  );
  for (const key of keys) {
    const runs = queueRuns.get(key)!;
    expect(runs.map((r) => r.n)).toEqual([0, 1, 2, 3]);
    // A job's model call ends DELAY_MS after it started, so a later start of the same key before that
    // would mean two jobs of one key ran at once.
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.at - runs[i - 1]!.at).toBeGreaterThanOrEqual(DELAY_MS);
  }

  const health = await c.health();
  expect(health).toMatchObject({ status: "ok", queue: { backend: "redis", workers: 4, active: 0 } });
  const metrics = await c.metrics();
  const total = SESSIONS * TURNS;
  expect(metrics).toContain(`herald_turns_started_total{platform="api"} ${total}\n`);
  expect(metrics).toContain(`herald_turns_finished_total{outcome="ok",platform="api"} ${total}\n`);
  expect(metrics).toContain(`herald_turn_duration_seconds_count{outcome="ok"} ${total}\n`);
  expect(metrics).toContain(`herald_deliveries_total{outcome="delivered",platform="api"} ${total}\n`);
  expect(metrics).toContain("herald_queue_workers 4\n");
  expect(metrics).toContain("herald_queue_up 1\n");
}, 90_000);

function job(turnId: string, text: string): TurnJob {
  return {
    kind: "turn",
    turnId,
    origin: {
      sessionId: turnId,
      sessionKey: `queue-test:${turnId}`,
      chat: { platform: "api", chatId: turnId },
      chatType: "dm",
      userId: "u",
    },
    history: [],
    input: { text },
    systemPrompt: "test",
    toolsets: [],
    createdAt: Date.now(),
  };
}
