/**
 * The Matrix adapter across restarts: the saved sync state resumes from `since` (old messages are not
 * replayed, messages sent while it was down are delivered), the token is saved only after the gateway
 * recorded the messages, and a password login is kept and reused on one device.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMatrixAdapter } from "../../adapters/matrix/index.js";
import { silentLogger } from "../../core/logger.js";
import type { InboundMessage } from "../../core/types.js";
import { ALICE, type MatrixEnv, startMatrixEnv } from "./matrix-env.js";

let env: MatrixEnv;

beforeEach(async () => {
  env = await startMatrixEnv();
});

afterEach(async () => {
  await env.close();
});

describe("Matrix adapter: restarts", () => {
  it("resumes from the saved since token: nothing old replayed, messages sent while down delivered", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    fake.userSends(room, ALICE, "history before the first start");
    await env.start();
    fake.userSends(room, ALICE, "one");
    await env.waitForReceived(1);
    await env.stopAdapter();

    fake.userSends(room, ALICE, "sent while the bot was down");
    const syncsBefore = fake.syncs().length;
    await env.start();
    fake.userSends(room, ALICE, "after restart");
    await env.waitForReceived(3);
    expect(env.received.map((m) => m.text)).toEqual(["one", "sent while the bot was down", "after restart"]);
    // The first sync after the restart is incremental, from where the last run stopped.
    expect(fake.syncs()[syncsBefore]!.query["since"]).toMatch(/^s\d+$/);
    // The room's state came back from the store: it is still known as a DM.
    expect(env.received[1]).toMatchObject({ chatType: "dm", mentioned: true });
  });

  it("keeps the older token when the gateway could not record a message, so a restart delivers it again", async () => {
    const { fake, kv } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    const failing = createMatrixAdapter(env.config(), {
      logger: silentLogger(),
      homeDir: env.cacheDir,
      cacheDir: env.cacheDir,
      kv,
    });
    const attempts: string[] = [];
    await failing.start(async (m: InboundMessage) => {
      attempts.push(m.text);
      throw new Error("disk full");
    });
    fake.userSends(room, ALICE, "please do not lose me");
    await fake.waitFor(() => attempts.length >= 3);
    await failing.stop();
    expect(attempts).toEqual(["please do not lose me", "please do not lose me", "please do not lose me"]);

    await env.start();
    const [msg] = await env.waitForReceived(1);
    expect(msg!.text).toBe("please do not lose me");
  });

  it("logs in with a password once, stores token and device, and reuses them after a restart", async () => {
    const { fake, kv } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    const passwordConfig = { accessToken: undefined, userId: fake.botUserId, password: fake.botPassword };
    await env.start(passwordConfig);
    const logins = () => fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/login"));
    expect(logins()).toHaveLength(1);
    const stored = JSON.parse(kv.get("credentials")!) as { accessToken: string; deviceId: string };
    expect(stored.deviceId).toMatch(/^DEV/);
    expect(JSON.stringify(logins()[0]!.body)).not.toContain(stored.accessToken);

    await env.start(passwordConfig);
    expect(logins()).toHaveLength(1);
    fake.userSends(room, ALICE, "hi again");
    await env.waitForReceived(1);
    const syncUsers = new Set(fake.syncs().map((r) => r.userId));
    expect(syncUsers).toEqual(new Set([fake.botUserId]));

    // A revoked token: the next start logs in again on the same device.
    fake.revokeTokens();
    await env.start(passwordConfig);
    expect(logins()).toHaveLength(2);
    expect(logins()[1]!.body).toMatchObject({ device_id: stored.deviceId });
  });

  it("logs in again by itself when the token is revoked while running", async () => {
    const { fake } = env;
    const room = fake.createRoom({ members: [ALICE], direct: true });
    await env.start({
      accessToken: undefined,
      userId: fake.botUserId,
      password: fake.botPassword,
      pollTimeoutMs: 200,
    });
    fake.revokeTokens();
    await fake.waitFor(
      () => fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/login")).length === 2,
    );
    fake.userSends(room, ALICE, "are you back?");
    const [msg] = await env.waitForReceived(1);
    expect(msg!.text).toBe("are you back?");
    expect(env.adapter!.status().state).toBe("running");
  });

  it("rejects start naming MATRIX_PASSWORD when the password is wrong", async () => {
    const err = await env
      .start({ accessToken: undefined, userId: env.fake.botUserId, password: "nope" })
      .catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ code: "platform_auth_failed" });
    expect((err as Error).message).toContain("MATRIX_PASSWORD");
    expect((err as Error).message).not.toContain("nope");
  });

  it("rejects start naming MATRIX_HOMESERVER when nothing answers there", async () => {
    const url = env.fake.url;
    await env.fake.close();
    const err = await env.start({ homeserver: url }).catch((e: unknown) => e as Error);
    expect((err as Error).message).toContain("MATRIX_HOMESERVER");
    expect(err).toMatchObject({ retryable: true });
  });
});
