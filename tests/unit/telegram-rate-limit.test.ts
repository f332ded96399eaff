import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, SendBudget } from "../../adapters/telegram/rate-limit.js";
import { PlatformError } from "../../core/errors.js";

function clock() {
  let now = 1_000_000;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe("telegram send budget", () => {
  it("lets a chat burst 3 calls, then one per second; other chats are unaffected", () => {
    const c = clock();
    const budget = new SendBudget(DEFAULT_LIMITS, c.now);
    expect([1, 2, 3].map(() => budget.tryTake("111"))).toEqual([true, true, true]);
    expect(budget.tryTake("111")).toBe(false);
    expect(budget.waitMs("111", "message")).toBe(1000);
    expect(budget.tryTake("222")).toBe(true);
    c.advance(1000);
    expect(budget.tryTake("111")).toBe(true);
    expect(budget.tryTake("111")).toBe(false);
  });

  it("shows typing only while the reply keeps a slot: a second message soon after is answered at once", () => {
    const c = clock();
    const budget = new SendBudget(DEFAULT_LIMITS, c.now);
    // The first message: typing, then the reply.
    expect(budget.tryTakeSpare("111")).toBe(true);
    expect(budget.tryTake("111", "message")).toBe(true);
    c.advance(200);
    // The second, 200 ms later: typing is skipped, and the reply need not wait for the next second.
    expect(budget.tryTakeSpare("111")).toBe(false);
    expect(budget.waitMs("111", "message")).toBe(0);
    c.advance(1800);
    expect(budget.tryTakeSpare("111")).toBe(true);
  });

  it("holds a group to 20 messages a minute, but typing and edits do not spend that", () => {
    const c = clock();
    const budget = new SendBudget(
      { ...DEFAULT_LIMITS, perChatPerSecond: 100, perChatBurst: 100, globalPerSecond: 1000 },
      c.now,
    );
    for (let i = 0; i < 20; i++) expect(budget.tryTake("-100", "message")).toBe(true);
    expect(budget.waitMs("-100", "message")).toBe(3000);
    expect(budget.tryTake("-100", "other")).toBe(true);
    // A DM has no per-minute limit.
    for (let i = 0; i < 25; i++) expect(budget.tryTake("42", "message")).toBe(true);
  });

  it("keeps the whole bot under 30 calls a second", () => {
    const c = clock();
    const budget = new SendBudget(DEFAULT_LIMITS, c.now);
    for (let chat = 0; chat < 30; chat++) expect(budget.tryTake(String(chat))).toBe(true);
    expect(budget.tryTake("999")).toBe(false);
    c.advance(34);
    expect(budget.tryTake("999")).toBe(true);
  });

  it("a 429 blocks only its chat until retry_after has passed", async () => {
    const c = clock();
    const budget = new SendBudget(DEFAULT_LIMITS, c.now);
    budget.block("111", 5000);
    expect(budget.tryTake("111")).toBe(false);
    expect(budget.tryTake("222")).toBe(true);
    const err = await budget.take("111", "message").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 5000, code: "platform_rate_limited" });
    c.advance(5000);
    await budget.take("111", "message");
  });

  it("refuses (without reserving) a wait longer than maxWaitMs", async () => {
    const c = clock();
    const budget = new SendBudget({ ...DEFAULT_LIMITS, maxWaitMs: 1500 }, c.now);
    for (let i = 0; i < 3; i++) budget.tryTake("111");
    budget.tryTake("111", "other");
    budget.tryTake("111", "other");
    expect(budget.waitMs("111", "message")).toBe(1000);
    // Reserve the slot 1 s away; the next one would be 2 s away: refused with when to come back.
    const first = budget.take("111", "message");
    const refused = await budget.take("111", "message").catch((e: unknown) => e);
    expect(refused).toMatchObject({ retryAfterMs: 2000 });
    c.advance(1000);
    await first;
    expect(budget.waitMs("111", "message")).toBe(1000);
  });
});
