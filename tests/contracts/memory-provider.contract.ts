/**
 * The MemoryProvider contract suite: every provider, against its vendor's fake API, records an exchange
 * under the user's stable id, tells one user's insights and never another's, keeps each agent's records
 * and reads apart (what a user told one agent never comes back to another), answers a question, is
 * checked by the doctor (a refused key fails the check), and fails an outage as a retryable error.
 */
import { afterEach, describe, expect, it } from "vitest";
import { userPeerId } from "../../agent/tools/memory-providers/ids.js";
import {
  type Exchange,
  type MemoryProvider,
  MemoryProviderError,
} from "../../agent/tools/memory-providers/types.js";

/** A provider against its fake, and what the fake saw. */
export interface ProviderDriver {
  /** The provider on the fake (with the fake's key unless another is given). */
  make(apiKey?: string): MemoryProvider;
  /** The user messages the fake recorded for this provider id, in order. */
  received(userId: string): string[];
  /** The fake's knowledge of a user (what its insights and answers contain). */
  teach(userId: string, text: string): void;
  down(): void;
  close(): Promise<void>;
}

const signal = () => AbortSignal.timeout(10_000);

export function exchange(over: Partial<Exchange> = {}): Exchange {
  return {
    turnId: "t1",
    sessionKey: "telegram:dm:42",
    platform: "telegram",
    userId: "42",
    userName: "Ada",
    chatType: "dm",
    userText: "I moved to Lisbon last month",
    replyText: "Welcome to Lisbon!",
    at: Date.parse("2026-01-02T03:04:05Z"),
    ...over,
  };
}

export function memoryProviderContract(name: string, start: () => Promise<ProviderDriver>): void {
  describe(`MemoryProvider contract: ${name}`, () => {
    let driver: ProviderDriver | undefined;
    afterEach(async () => {
      await driver?.close();
      driver = undefined;
    });
    const ada = { platform: "telegram", userId: "42" };
    const bob = { platform: "telegram", userId: "43" };

    it("records an exchange under the user's stable id", async () => {
      driver = await start();
      await driver.make().addExchange(exchange(), signal());
      await driver.make().addExchange(exchange({ turnId: "t2", userText: "I cycle to work" }), signal());
      expect(driver.received(userPeerId("telegram", "42"))).toEqual([
        "I moved to Lisbon last month",
        "I cycle to work",
      ]);
      expect(driver.received(userPeerId("telegram", "43"))).toEqual([]);
    });

    it("tells a user's insights and answers about them, never another user's", async () => {
      driver = await start();
      const provider = driver.make();
      await provider.addExchange(exchange(), signal());
      await provider.addExchange(exchange({ userId: "43", userText: "I live in Oslo" }), signal());
      driver.teach(userPeerId("telegram", "42"), "Lives in Lisbon");
      driver.teach(userPeerId("telegram", "43"), "Lives in Oslo");
      const insights = await provider.insights(ada, signal());
      expect(insights).toContain("Lisbon");
      expect(insights).not.toContain("Oslo");
      const answer = await provider.query(bob, "Where does the user live?", signal());
      expect(answer).toContain("Oslo");
      expect(answer).not.toContain("Lisbon");
      expect(await provider.insights({ platform: "discord", userId: "42" }, signal())).toBeUndefined();
    });

    it("keeps each agent's records and reads apart", async () => {
      driver = await start();
      const provider = driver.make();
      await provider.addExchange(exchange({ userText: "My locker code is under the cat bowl" }), signal());
      await provider.addExchange(
        exchange({
          turnId: "t2",
          agent: "family",
          sessionKey: "family/telegram:dm:42",
          userText: "We plan a picnic with the kids on Sunday",
        }),
        signal(),
      );
      const family = await provider.insights({ ...ada, agent: "family" }, signal());
      expect(family).toContain("picnic");
      expect(family).not.toContain("locker");
      const own = await provider.insights(ada, signal());
      expect(own).toContain("locker");
      expect(own).not.toContain("picnic");
      const answer = await provider.query({ ...ada, agent: "family" }, "What is the locker code?", signal());
      expect(answer).not.toContain("locker");
      expect(await provider.insights({ ...ada, agent: "work" }, signal())).toBeUndefined();
    });

    it("passes the doctor's check, and fails it with a refused key", async () => {
      driver = await start();
      expect(await driver.make().check(signal())).toMatchObject({ ok: true });
      const refused = await driver.make("wrong").check(signal());
      expect(refused.ok).toBe(false);
      expect(refused.text).toMatch(/401 \(the API key was refused\)/);
      expect(refused.text).not.toContain("wrong");
    });

    it("fails an outage as a retryable error", async () => {
      driver = await start();
      driver.down();
      const err = await driver
        .make()
        .addExchange(exchange(), signal())
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MemoryProviderError);
      expect(err).toMatchObject({ retryable: true, status: 503 });
    });
  });
}
