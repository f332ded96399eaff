/**
 * Discord adapter, connection side, end to end against the fake gateway: heartbeats, resume after a
 * disconnect with nothing lost or doubled, start-up errors that name the fix, status reporting.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { PlatformError } from "../../core/errors.js";
import type { InboundMessage } from "../../core/types.js";
import { type DiscordEnv, IDS, recorder, startDiscordEnv } from "./discord-env.js";

let env: DiscordEnv | undefined;

afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("discord gateway connection", () => {
  it("heartbeats and gets ACKs", async () => {
    env = await startDiscordEnv({ fake: { heartbeatIntervalMs: 100 } });
    await vi.waitFor(() => expect(env!.fake.gateway.received(1).length).toBeGreaterThanOrEqual(2));
    const acks = env.fake.gateway.frames.filter((f) => f.dir === "out" && f.op === 11);
    expect(acks.length).toBeGreaterThanOrEqual(2);
    expect(env.adapter.status().state).toBe("running");
  });

  it("resumes after a dropped connection: messages sent meanwhile arrive, none twice", async () => {
    env = await startDiscordEnv();
    const { fake } = env;
    fake.userSays({ channelId: IDS.aliceDm, content: "before" });
    await env.nextMessage(1);

    fake.gateway.drop();
    await vi.waitFor(() => expect(env!.adapter.status().state).toBe("reconnecting"));
    fake.userSays({ channelId: IDS.aliceDm, content: "while disconnected" });
    await fake.gateway.waitLive();
    fake.userSays({ channelId: IDS.aliceDm, content: "after" });
    await env.nextMessage(3);

    expect(env.received.map((m) => m.text)).toEqual(["before", "while disconnected", "after"]);
    expect(fake.gateway.received(2)).toHaveLength(1); // one IDENTIFY
    const resume = fake.gateway.received(6)[0]?.d as { session_id: string; seq: number };
    expect(resume.session_id).toBeTruthy();
    await vi.waitFor(() => expect(env!.adapter.status().state).toBe("running"));
  });

  it("follows op 7 RECONNECT with a RESUME, and a replayed message is passed on once", async () => {
    env = await startDiscordEnv();
    const { fake } = env;
    fake.userSays({ channelId: IDS.general, content: "first" });
    await env.nextMessage(1);
    fake.gateway.replayOnResume = 3; // Discord replays events the client already had
    fake.gateway.requestReconnect();
    await vi.waitFor(() => expect(fake.gateway.received(6)).toHaveLength(1));
    await fake.gateway.waitLive();
    fake.userSays({ channelId: IDS.general, content: "second" });
    await env.nextMessage(2);
    // Let any duplicate arrive before asserting.
    await new Promise((r) => setTimeout(r, 100));
    expect(env.received.map((m) => m.text)).toEqual(["first", "second"]);
    const replayed = fake.gateway.frames.filter(
      (f) => f.dir === "out" && f.t === "MESSAGE_CREATE" && (f.d as { content: string }).content === "first",
    );
    expect(replayed.length).toBe(2);
  });

  it("rejects start with the fix when the token is invalid", async () => {
    env = await startDiscordEnv({ noStart: true });
    const adapter = env.newAdapter({ botToken: "not-the-token" });
    const error = (await adapter.start(async () => "accepted").catch((e: unknown) => e)) as PlatformError;
    expect(error).toBeInstanceOf(PlatformError);
    expect(error.code).toBe("platform_auth_failed");
    expect(error.message).toMatch(/DISCORD_BOT_TOKEN/);
    expect(error.message).toMatch(/developer portal/);
    expect(error.message).not.toContain("not-the-token");
    expect(adapter.status().state).toBe("failed");
    expect(env.fake.gateway.connections).toBe(0);
  });

  it("rejects start with the portal setting to change when Message Content is not enabled", async () => {
    env = await startDiscordEnv({ noStart: true, fake: { messageContentIntent: false } });
    const error = (await env.adapter.start(async () => "accepted").catch((e: unknown) => e)) as PlatformError;
    expect(error).toBeInstanceOf(PlatformError);
    expect(error.message).toMatch(/MESSAGE CONTENT INTENT/);
    expect(error.message).toMatch(/developer portal/);
    expect(env.adapter.status().state).toBe("failed");
  });

  it("reports failed, without throwing, when Discord closes the session for good later", async () => {
    env = await startDiscordEnv();
    env.fake.gateway.closeWith(4004, "Authentication failed.");
    await vi.waitFor(() => expect(env!.adapter.status().state).toBe("failed"));
    expect(env.adapter.status().detail).toMatch(/DISCORD_BOT_TOKEN/);
  });

  it("retries handing a message over when recording fails", async () => {
    let calls = 0;
    env = await startDiscordEnv({
      outcome: () => {
        calls += 1;
        if (calls === 1) throw new Error("database is locked");
        return "accepted";
      },
    });
    env.fake.userSays({ channelId: IDS.aliceDm, content: "keep me" });
    await env.nextMessage(2);
    expect(env.received.map((m) => m.messageId)).toEqual([
      env.received[0]!.messageId,
      env.received[0]!.messageId,
    ]);
  });

  it("after a restart, catches up on messages sent while it was down, in order, without repeats", async () => {
    env = await startDiscordEnv();
    const { fake } = env;
    fake.userSays({ channelId: IDS.aliceDm, content: "before" });
    fake.userSays({ channelId: IDS.general, content: "channel before" });
    await env.nextMessage(2);
    await env.adapter.stop();

    fake.userSays({ channelId: IDS.aliceDm, content: "while down 1" });
    fake.userSays({ channelId: IDS.aliceDm, content: "while down 2" });
    fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> while down in the channel` });
    fake.userSays({ channelId: IDS.random, content: "a channel it never saw" });

    const received: InboundMessage[] = [];
    const again = env.newAdapter();
    await again.start(recorder(received));
    await vi.waitFor(() => expect(received).toHaveLength(3));
    expect(received.filter((m) => m.chat.chatId === IDS.aliceDm).map((m) => m.text)).toEqual([
      "while down 1",
      "while down 2",
    ]);
    expect(received.find((m) => m.chat.chatId === IDS.general)).toMatchObject({
      text: "while down in the channel",
      mentioned: true,
    });
    // Live messages keep flowing after the catch-up.
    fake.userSays({ channelId: IDS.aliceDm, content: "live again" });
    await vi.waitFor(() => expect(received.at(-1)?.text).toBe("live again"));
    expect(received).toHaveLength(4);
  });

  it("does not catch up on channels quiet for longer than the window", async () => {
    env = await startDiscordEnv({ noStart: true });
    // A cursor from early 2025 (snowflake time), far outside the 12 h window.
    env.kv.set("backfill.cursors", JSON.stringify({ [IDS.aliceDm]: "1345680011111111111" }));
    await env.adapter.start(recorder(env.received));
    env.fake.userSays({ channelId: IDS.general, content: "live" });
    await env.nextMessage(1);
    expect(env.fake.requests.some((r) => r.method === "GET" && r.path.endsWith("/messages"))).toBe(false);
  });

  it("start and stop are idempotent", async () => {
    env = await startDiscordEnv();
    await env.adapter.start(async () => "accepted");
    expect(env.fake.gateway.connections).toBe(1);
    await env.adapter.stop();
    await env.adapter.stop();
    expect(env.adapter.status().state).toBe("stopped");
  });
});
