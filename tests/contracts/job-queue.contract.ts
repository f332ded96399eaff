/**
 * The JobQueue contract suite: every backend runs these cases. No case asserts on wall-clock time;
 * "never happened" is proven by a later job of the same orderingKey, which the contract guarantees
 * to run after everything enqueued before it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HeraldError } from "../../core/errors.js";
import type { JobHandler, JobQueue, QueueEvent, TurnJob, TurnResult } from "../../core/turn.js";

/** Builds a fresh queue for one case. Retries must back off briefly (tens of ms) and try at least 3 times. */
export type MakeQueue = () => Promise<JobQueue>;

export function turnJob(turnId: string, text = turnId): TurnJob {
  return {
    kind: "turn",
    turnId,
    origin: {
      sessionId: "s1",
      sessionKey: "telegram:dm:1",
      chat: { platform: "telegram", chatId: "1" },
      chatType: "dm",
      userId: "u1",
    },
    history: [],
    input: { text },
    systemPrompt: "",
    toolsets: [],
    createdAt: 0,
  };
}

export function okResult(turnId: string, text: string): TurnResult {
  return {
    kind: "ok",
    turnId,
    messages: [],
    reply: { text },
    usage: { promptTokens: 0, completionTokens: 0, modelCalls: 1, toolCalls: 0 },
    model: "test",
  };
}

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Records a queue's events and waits for the ones a case needs. */
export function record(queue: JobQueue) {
  const events: QueueEvent[] = [];
  const waiters: { match: (e: QueueEvent) => boolean; resolve: (e: QueueEvent) => void }[] = [];
  const unsubscribe = queue.subscribe((event) => {
    events.push(event);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i]!;
      if (waiter.match(event)) {
        waiters.splice(i, 1);
        waiter.resolve(event);
      }
    }
  });
  return {
    events,
    unsubscribe,
    /** Resolves with the `nth` (1-based) event matching, counting events already seen. */
    next(match: (e: QueueEvent) => boolean, nth = 1): Promise<QueueEvent> {
      const seen = events.filter(match);
      if (seen.length >= nth) return Promise.resolve(seen[nth - 1]!);
      let remaining = nth - seen.length;
      return new Promise((resolve) => {
        waiters.push({
          match: (e) => match(e) && --remaining === 0,
          resolve,
        });
      });
    },
    of(jobId: string): QueueEvent[] {
      return events.filter((e) => e.jobId === jobId);
    },
  };
}

const is = (type: QueueEvent["type"], jobId: string) => (e: QueueEvent) =>
  e.type === type && e.jobId === jobId;

/** Rejects when the signal aborts, as a well-behaved handler does. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function jobQueueContract(name: string, makeQueue: MakeQueue): void {
  describe(`JobQueue contract: ${name}`, () => {
    const open: JobQueue[] = [];
    const make = async () => {
      const queue = await makeQueue();
      open.push(queue);
      return queue;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((q) => q.close()));
    });

    it("runs a job and emits completed with the handler's result", async () => {
      const queue = await make();
      const rec = record(queue);
      await queue.consume(async (job) => okResult(job.turnId, `echo ${job.input.text}`));
      await queue.enqueue(turnJob("t1", "hello"), { id: "job-1", orderingKey: "k" });
      const event = await rec.next(is("completed", "job-1"));
      expect(event).toEqual({ type: "completed", jobId: "job-1", result: okResult("t1", "echo hello") });
    });

    it("keeps ids with colons and numbers intact in events", async () => {
      const queue = await make();
      const rec = record(queue);
      await queue.consume(async (job) => okResult(job.turnId, "ok"));
      await queue.enqueue(turnJob("a"), { id: "telegram:42:turn%3A7", orderingKey: "telegram:dm:42" });
      await queue.enqueue(turnJob("b"), { id: "12345", orderingKey: "telegram:dm:42" });
      await rec.next(is("completed", "telegram:42:turn%3A7"));
      await rec.next(is("completed", "12345"));
    });

    it("delivers progress to subscribers while the job runs", async () => {
      const queue = await make();
      const rec = record(queue);
      const seen = deferred();
      await queue.consume(async (job, { progress }) => {
        progress({ type: "status", turnId: job.turnId, text: "thinking" });
        await seen.promise;
        return okResult(job.turnId, "done");
      });
      await queue.enqueue(turnJob("t1"), { id: "p1", orderingKey: "k" });
      const event = await rec.next(is("progress", "p1"));
      expect(event).toEqual({
        type: "progress",
        jobId: "p1",
        progress: { type: "status", turnId: "t1", text: "thinking" },
      });
      seen.resolve();
      await rec.next(is("completed", "p1"));
    });

    it("never overlaps jobs of one orderingKey and runs them in enqueue order", async () => {
      const queue = await make();
      const rec = record(queue);
      const keys = ["a", "b", "c"];
      const perKey = 5;
      const log = new Map<string, string[]>(keys.map((k) => [k, []]));
      await queue.consume(
        async (job) => {
          const [key, n] = job.input.text.split("/") as [string, string];
          log.get(key)!.push(`start ${n}`);
          await sleep(Math.floor(Math.random() * 15));
          log.get(key)!.push(`end ${n}`);
          return okResult(job.turnId, "ok");
        },
        { concurrency: 4 },
      );
      const enqueues: Promise<void>[] = [];
      for (let n = 0; n < perKey; n++) {
        for (const key of keys) {
          enqueues.push(
            queue.enqueue(turnJob(`${key}${n}`, `${key}/${n}`), { id: `${key}-${n}`, orderingKey: key }),
          );
        }
      }
      await Promise.all(enqueues);
      for (const key of keys) await rec.next(is("completed", `${key}-${perKey - 1}`));
      for (const key of keys) {
        const expected = Array.from({ length: perKey }, (_, n) => [`start ${n}`, `end ${n}`]).flat();
        expect(log.get(key)).toEqual(expected);
      }
    });

    it("runs different orderingKeys in parallel up to the concurrency cap", async () => {
      const queue = await make();
      const rec = record(queue);
      const cap = 3;
      let running = 0;
      let maxRunning = 0;
      const allIn = deferred();
      await queue.consume(
        async (job) => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          if (running === cap) allIn.resolve();
          // Each of the first `cap` jobs waits until all of them run at once: a queue that serialised
          // different keys would never get here and the case would time out.
          await allIn.promise;
          running--;
          return okResult(job.turnId, "ok");
        },
        { concurrency: cap },
      );
      for (let i = 0; i < cap + 2; i++) {
        await queue.enqueue(turnJob(`t${i}`), { id: `par-${i}`, orderingKey: `key-${i}` });
      }
      for (let i = 0; i < cap + 2; i++) await rec.next(is("completed", `par-${i}`));
      expect(maxRunning).toBe(cap);
    });

    it("runs a job enqueued twice under one id once", async () => {
      const queue = await make();
      const rec = record(queue);
      const runs = new Map<string, number>();
      const gate = deferred();
      await queue.consume(async (job) => {
        runs.set(job.turnId, (runs.get(job.turnId) ?? 0) + 1);
        await gate.promise;
        return okResult(job.turnId, "ok");
      });
      await Promise.all([
        queue.enqueue(turnJob("dup"), { id: "dup", orderingKey: "k" }),
        queue.enqueue(turnJob("dup"), { id: "dup", orderingKey: "k" }),
      ]);
      await queue.enqueue(turnJob("dup"), { id: "dup", orderingKey: "k" });
      // A later job of the same key runs after any copy of "dup" that was queued.
      await queue.enqueue(turnJob("marker"), { id: "marker", orderingKey: "k" });
      gate.resolve();
      await rec.next(is("completed", "marker"));
      expect(runs.get("dup")).toBe(1);
      expect(rec.of("dup").filter((e) => e.type === "completed")).toHaveLength(1);
    });

    it("re-emits completed for a re-enqueued finished id without running it again", async () => {
      const queue = await make();
      const rec = record(queue);
      let runs = 0;
      await queue.consume(async (job) => {
        if (job.turnId === "once") runs++;
        return okResult(job.turnId, "first");
      });
      await queue.enqueue(turnJob("once"), { id: "once", orderingKey: "k" });
      const first = await rec.next(is("completed", "once"));
      await queue.enqueue(turnJob("once"), { id: "once", orderingKey: "k" });
      const second = await rec.next(is("completed", "once"), 2);
      expect(second).toEqual(first);
      await queue.enqueue(turnJob("marker"), { id: "marker", orderingKey: "k" });
      await rec.next(is("completed", "marker"));
      expect(runs).toBe(1);
    });

    it("cancels a running job: its signal aborts and nothing is emitted for it", async () => {
      const queue = await make();
      const rec = record(queue);
      const started = deferred();
      const aborted = deferred<unknown>();
      await queue.consume(async (job, { signal }) => {
        if (job.turnId !== "long") return okResult(job.turnId, "ok");
        started.resolve();
        try {
          return await untilAborted(signal);
        } catch (err) {
          aborted.resolve(err);
          throw err;
        }
      });
      await queue.enqueue(turnJob("long"), { id: "long", orderingKey: "k" });
      await started.promise;
      await queue.cancel("long");
      await aborted.promise;
      await queue.enqueue(turnJob("marker"), { id: "marker", orderingKey: "k" });
      await rec.next(is("completed", "marker"));
      expect(rec.of("long")).toEqual([]);
    });

    it("cancels a waiting job: it never runs", async () => {
      const queue = await make();
      const rec = record(queue);
      const ran: string[] = [];
      const started = deferred();
      const gate = deferred();
      await queue.consume(
        async (job) => {
          ran.push(job.turnId);
          if (job.turnId === "first") {
            started.resolve();
            await gate.promise;
          }
          return okResult(job.turnId, "ok");
        },
        { concurrency: 1 },
      );
      await queue.enqueue(turnJob("first"), { id: "first", orderingKey: "k" });
      await started.promise;
      await queue.enqueue(turnJob("doomed"), { id: "doomed", orderingKey: "k" });
      await queue.cancel("doomed");
      gate.resolve();
      await queue.enqueue(turnJob("marker"), { id: "marker", orderingKey: "k" });
      await rec.next(is("completed", "marker"));
      expect(ran).toEqual(["first", "marker"]);
      expect(rec.of("doomed")).toEqual([]);
    });

    it("lends the slot of a job waiting in ctx.idle, and takes it back when the wait ends", async () => {
      const queue = await make();
      const rec = record(queue);
      const childRan = deferred();
      let hadIdle = false;
      let running = 0;
      let maxRunning = 0;
      await queue.consume(
        async (job, ctx) => {
          if (job.turnId === "parent") {
            hadIdle = ctx.idle !== undefined;
            // One slot, held by this job: the child runs only if the wait lends it.
            const wait = Promise.race([childRan.promise, untilAborted(ctx.signal)]);
            const text = await (ctx.idle ?? ((w) => w))(wait.then(() => "children done"));
            return okResult(job.turnId, text);
          }
          if (job.turnId === "child") {
            childRan.resolve();
            return okResult(job.turnId, "ok");
          }
          running++;
          maxRunning = Math.max(maxRunning, running);
          await sleep(100);
          running--;
          return okResult(job.turnId, "ok");
        },
        { concurrency: 1 },
      );
      await queue.enqueue(turnJob("parent"), { id: "parent", orderingKey: "p" });
      await queue.enqueue(turnJob("child"), { id: "child", orderingKey: "c" });
      const parent = await rec.next(is("completed", "parent"));
      expect(hadIdle).toBe(true);
      expect(parent).toEqual({
        type: "completed",
        jobId: "parent",
        result: okResult("parent", "children done"),
      });
      // The slot came back: two keys run one at a time again.
      await queue.enqueue(turnJob("a"), { id: "a", orderingKey: "a" });
      await queue.enqueue(turnJob("b"), { id: "b", orderingKey: "b" });
      await rec.next(is("completed", "a"));
      await rec.next(is("completed", "b"));
      expect(maxRunning).toBe(1);
    });

    it("keeps the orderingKey of a job waiting in ctx.idle: its key's next job runs after it", async () => {
      const queue = await make();
      const rec = record(queue);
      const log: string[] = [];
      const otherRan = deferred();
      await queue.consume(
        async (job, ctx) => {
          log.push(`start ${job.turnId}`);
          if (job.turnId === "parent") {
            const wait = Promise.race([otherRan.promise, untilAborted(ctx.signal)]);
            await (ctx.idle ?? ((w) => w))(wait);
          }
          if (job.turnId === "other") otherRan.resolve();
          log.push(`end ${job.turnId}`);
          return okResult(job.turnId, "ok");
        },
        { concurrency: 1 },
      );
      await queue.enqueue(turnJob("parent"), { id: "parent", orderingKey: "k" });
      await queue.enqueue(turnJob("next"), { id: "next", orderingKey: "k" });
      await queue.enqueue(turnJob("other"), { id: "other", orderingKey: "o" });
      await rec.next(is("completed", "next"));
      // The lent slot ran the other key's job, never the waiting job's own key.
      expect(log.indexOf("start next")).toBeGreaterThan(log.indexOf("end parent"));
      expect(log.indexOf("end other")).toBeLessThan(log.indexOf("end parent"));
    });

    it("cancels a job waiting in ctx.idle: the wait aborts and the slot comes back once", async () => {
      const queue = await make();
      const rec = record(queue);
      let running = 0;
      let maxRunning = 0;
      await queue.consume(
        async (job, ctx) => {
          if (job.turnId === "parent") return (ctx.idle ?? ((w) => w))(untilAborted(ctx.signal));
          running++;
          maxRunning = Math.max(maxRunning, running);
          await sleep(100);
          running--;
          return okResult(job.turnId, "ok");
        },
        { concurrency: 1 },
      );
      await queue.enqueue(turnJob("parent"), { id: "parent", orderingKey: "p" });
      await queue.enqueue(turnJob("child"), { id: "child", orderingKey: "c" });
      await rec.next(is("completed", "child"));
      await queue.cancel("parent");
      await queue.enqueue(turnJob("marker"), { id: "marker", orderingKey: "p" });
      await queue.enqueue(turnJob("other"), { id: "other", orderingKey: "o" });
      await rec.next(is("completed", "marker"));
      await rec.next(is("completed", "other"));
      expect(rec.of("parent")).toEqual([]);
      // Neither kept lent (two at once) nor given back twice (none at all).
      expect(maxRunning).toBe(1);
    });

    it("retries a retryable failure and then completes", async () => {
      const queue = await make();
      const rec = record(queue);
      let runs = 0;
      await queue.consume(async (job) => {
        runs++;
        if (runs < 3) throw new HeraldError("model busy", { code: "model_unavailable", retryable: true });
        return okResult(job.turnId, `after ${runs}`);
      });
      await queue.enqueue(turnJob("flaky"), { id: "flaky", orderingKey: "k" });
      const event = await rec.next(is("completed", "flaky"));
      expect(event).toEqual({ type: "completed", jobId: "flaky", result: okResult("flaky", "after 3") });
      expect(rec.of("flaky").filter((e) => e.type === "failed")).toEqual([]);
    });

    it("fails a non-retryable failure once, without retrying", async () => {
      const queue = await make();
      const rec = record(queue);
      let runs = 0;
      const handler: JobHandler = async (job) => {
        if (job.turnId === "marker") return okResult(job.turnId, "ok");
        runs++;
        throw new HeraldError("bad tool arguments", { code: "tool_invalid_args" });
      };
      await queue.consume(handler);
      await queue.enqueue(turnJob("broken"), { id: "broken", orderingKey: "k" });
      const event = await rec.next(is("failed", "broken"));
      expect(event).toMatchObject({ type: "failed", jobId: "broken", retryable: false });
      expect(event.type === "failed" && event.error).toContain("bad tool arguments");
      await queue.enqueue(turnJob("marker"), { id: "marker", orderingKey: "k" });
      await rec.next(is("completed", "marker"));
      expect(runs).toBe(1);
      expect(rec.of("broken")).toHaveLength(1);
    });

    it("closes cleanly: running handlers are aborted and no handles stay open", async () => {
      const handlesBefore = countHandles();
      const queue = await makeQueue();
      const rec = record(queue);
      const started = deferred();
      let signal: AbortSignal | undefined;
      await queue.consume(async (job, ctx) => {
        signal = ctx.signal;
        started.resolve();
        return untilAborted(ctx.signal).catch(() => okResult(job.turnId, "late"));
      });
      await queue.enqueue(turnJob("running"), { id: "running", orderingKey: "k" });
      await started.promise;
      await queue.close();
      await queue.close();
      expect(signal?.aborted).toBe(true);
      expect(rec.of("running")).toEqual([]);
      // Let sockets finish closing on the next turns of the event loop.
      await sleep(50);
      expect(countHandles()).toBeLessThanOrEqual(handlesBefore);
    });
  });
}

/** Sockets and timers this process holds; a queue that closed cleanly leaves none of its own. */
function countHandles(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap" || r === "Timeout").length;
}
