/**
 * The Matrix adapter under homeserver faults: a malformed or failed `/sync` answer, a slow homeserver,
 * a token revoked while running. It never throws after start: it reports its state and keeps receiving.
 */
import { createHook } from "node:async_hooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, type MatrixEnv, startMatrixEnv } from "./matrix-env.js";

let env: MatrixEnv;

beforeEach(async () => {
  env = await startMatrixEnv();
});

afterEach(async () => {
  await env.close();
});

describe("Matrix adapter: faults", () => {
  it("survives a malformed /sync answer and a bad gateway, reports reconnecting, then delivers", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    const adapter = await env.start({ pollTimeoutMs: 200 });
    fake.fail({ method: "GET", path: "/sync", status: 200, rawBody: "{this is not json" });
    await fake.waitFor(() => adapter.status().state === "reconnecting");
    fake.fail({ method: "GET", path: "/sync", status: 502, rawBody: "<html>Bad Gateway</html>" });
    fake.userSends(room, ALICE, "did you survive?");
    const [msg] = await env.waitForReceived(1, 20_000);
    expect(msg!.text).toBe("did you survive?");
    await fake.waitFor(() => adapter.status().state === "running");
  }, 30_000);

  it("waits out a slow homeserver answer to a send", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    const adapter = await env.start();
    fake.fail({ method: "PUT", path: "/send/", delayMs: 1500 });
    const result = await adapter.send(
      { platform: "matrix", chatId: room },
      { text: "slowly", idempotencyKey: "slow" },
    );
    expect(result.messageIds).toHaveLength(1);
    expect(fake.messages(room)).toHaveLength(1);
  });

  it("reports failed (and does not throw) when its access token is revoked while running", async () => {
    const { fake } = env;
    const adapter = await env.start({ pollTimeoutMs: 200 });
    fake.revokeTokens();
    await fake.waitFor(() => adapter.status().state === "failed");
    await adapter.stop();
    expect(adapter.status().state).toBe("stopped");
  });

  it("leaves no SDK timer that would keep the process alive after stop", async () => {
    const timers = new Map<number, NodeJS.Timeout>();
    const hook = createHook({
      init(id, type, _trigger, resource) {
        if (type === "Timeout" && new Error().stack?.includes("matrix-js-sdk"))
          timers.set(id, resource as NodeJS.Timeout);
      },
      destroy(id) {
        timers.delete(id);
      },
    }).enable();
    try {
      const room = env.fake.createRoom({ members: [ALICE], direct: true });
      const adapter = await env.start({ pollTimeoutMs: 200 });
      env.fake.userSends(room, ALICE, "hi");
      await env.waitForReceived(1);
      await adapter.sendTyping({ platform: "matrix", chatId: room });
      await adapter.send({ platform: "matrix", chatId: room }, { text: "hello", idempotencyKey: "t" });
      // A failed sync starts the SDK's keep-alive timer too.
      env.fake.fail({ method: "GET", path: "/sync", status: 502 });
      await env.fake.waitFor(() => adapter.status().state === "reconnecting");
      expect(timers.size).toBeGreaterThan(0);
      await env.stopAdapter();
      // Destroy hooks run asynchronously; `_destroyed` marks cleared or fired timers meanwhile.
      await new Promise((r) => setImmediate(r));
      const pending = (t: NodeJS.Timeout) => !(t as unknown as { _destroyed?: boolean })._destroyed;
      const refd = [...timers.values()].filter((t) => pending(t) && t.hasRef());
      expect(refd).toHaveLength(0);
    } finally {
      hook.disable();
    }
  });

  it("a stop right after a resumed start leaves no unhandled rejection behind", async () => {
    // Resuming from a saved sync, the SDK reports itself prepared from the cache while its startup
    // (push rules, filter) is still in flight; after that it sends its first /sync with the signal the
    // stop already aborted, and awaits it only if still running. Seen once in CI as an unhandled
    // AbortError, which kills a Node process.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      const { fake } = env;
      const room = fake.createRoom({ members: [ALICE], direct: true });
      await env.start();
      fake.userSends(room, ALICE, "before the restart");
      await env.waitForReceived(1);
      await env.stopAdapter();
      fake.fail({ method: "GET", path: "/pushrules/", delayMs: 300 });
      const adapter = await env.start();
      expect(adapter.status().state).toBe("running");
      await env.stopAdapter();
      const syncs = fake.syncs().length;
      // The SDK's startup finishes after the delayed push rules, then its /sync is aborted at once.
      await new Promise((r) => setTimeout(r, 800));
      expect(fake.syncs().length).toBe(syncs);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", record);
    }
  });

  it("stop is idempotent and safe before start", async () => {
    const adapter = await env.start();
    await adapter.stop();
    await adapter.stop();
    expect(adapter.status().state).toBe("stopped");
    await expect(
      adapter.send({ platform: "matrix", chatId: "!x:localhost" }, { text: "x", idempotencyKey: "x" }),
    ).rejects.toMatchObject({
      retryable: true,
    });
  });
});
