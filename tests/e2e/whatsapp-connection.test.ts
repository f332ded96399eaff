/**
 * The WhatsApp connection lifecycle at the socket boundary: linking by QR, reconnects with capped
 * exponential backoff and jitter (one attempt at a time), fatal closes, and the auth state on disk.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { BufferJSON, proto } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import { hasLinkedCreds, openFileAuthState } from "../../adapters/whatsapp/auth-state.js";
import { createBaileysSocketFactory } from "../../adapters/whatsapp/socket.js";
import { boom, fixture } from "../fakes/whatsapp/index.js";
import { ManualTimers, type WhatsAppEnv, whatsAppEnv } from "./whatsapp-env.js";

let env: WhatsAppEnv | undefined;

afterEach(async () => {
  await env?.close();
  env = undefined;
});

const backoff = { baseMs: 1000, maxMs: 8000, stableMs: 60_000 };

async function withTimers(opts: { linked?: boolean; stableMs?: number } = {}) {
  const timers = new ManualTimers();
  env = await whatsAppEnv({
    linked: opts.linked,
    options: {
      timers,
      backoff: { ...backoff, stableMs: opts.stableMs ?? backoff.stableMs },
      random: () => 0.5,
    },
  });
  return { e: env, timers };
}

const running = (e: WhatsAppEnv) => e.fake.waitFor(() => e.adapter.status().state === "running", "running");

describe("WhatsApp connection", () => {
  it("shows a QR code when not linked, saves the credentials on scan and reconnects at once (515)", async () => {
    const { e, timers } = await withTimers({ linked: false });
    await e.start();
    expect(e.qrs).toHaveLength(1);
    expect(e.adapter.status()).toEqual({
      state: "starting",
      detail: "waiting for the QR code to be scanned",
    });
    expect(e.lines.some((l) => String(l["msg"]).includes("herald whatsapp link --phone"))).toBe(true);

    await e.fake.current.scan();
    expect(timers.pending().map((t) => t.ms)).toEqual([0]);
    timers.fireAll();
    await running(e);
    expect(e.fake.sockets).toHaveLength(2);
    expect(e.qrs).toHaveLength(1);
    await e.adapter.stop();
    expect(hasLinkedCreds(e.authDir)).toBe(true);
    const creds = JSON.parse(readFileSync(join(e.authDir, "creds.json"), "utf8"), BufferJSON.reviver);
    expect(creds.me.id).toBe("15550001111:12@s.whatsapp.net");
    expect(Buffer.isBuffer(creds.noiseKey.private)).toBe(true);
  });

  it("reconnects once per close, after a capped, jittered, growing delay, on a new socket", async () => {
    const { e, timers } = await withTimers();
    await e.start();
    await running(e);
    const first = e.fake.current;
    e.fake.script.push({ close: 408 }, { close: 503 }, { close: 428 }, { close: 428 });
    // The same close reported twice (stream error, then socket end) must schedule one attempt only.
    const close = {
      connection: "close" as const,
      lastDisconnect: { error: boom("Connection Closed", 428), date: new Date() },
    };
    first.ev.emit("connection.update", close);
    first.ev.emit("connection.update", close);
    expect(timers.pending()).toHaveLength(1);
    expect(e.fake.sockets).toHaveLength(1);
    expect(e.adapter.status().state).toBe("reconnecting");

    for (let i = 2; i <= 5; i++) {
      timers.fireAll();
      await e.fake.waitForSockets(i);
      await e.fake.waitFor(() => timers.pending().length === 1, `reconnect ${i} scheduled`);
    }
    // base 1000 doubling, capped at 8000, then jittered to between half and all (random 0.5 → 75 %).
    expect(timers.scheduled.map((t) => t.ms)).toEqual([750, 1500, 3000, 6000, 6000]);
    timers.fireAll();
    await running(e);
    expect(e.fake.sockets).toHaveLength(6);

    // Messages arrive on the new socket only; the old emitter was destroyed.
    e.fake.current.deliver([fixture("dm-text")]);
    await e.fake.waitFor(() => e.received.length === 1, "the message on the new socket");
  });

  it("starts the backoff over after a connection that stayed up, not after one that flapped", async () => {
    const { e, timers } = await withTimers({ stableMs: 0 });
    await e.start();
    await running(e);
    e.fake.script.push({ close: 428 });
    await e.fake.current.drop(428);
    timers.fireAll();
    await e.fake.waitForSockets(2);
    await e.fake.waitFor(() => timers.pending().length === 1, "second reconnect");
    timers.fireAll();
    await running(e);
    await e.fake.current.drop(428);
    expect(timers.scheduled.map((t) => t.ms)).toEqual([750, 1500, 750]);
  });

  it("stops for good on a logged-out close: no reconnect, a message that says how to relink, creds deleted", async () => {
    const { e, timers } = await withTimers();
    await e.start();
    await running(e);
    await e.fake.current.drop(401);
    expect(timers.pending()).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    expect(e.fake.sockets).toHaveLength(1);
    const status = e.adapter.status();
    expect(status.state).toBe("failed");
    expect(status.detail).toMatch(/logged this device out.*herald whatsapp link/);
    const logged = e.lines.find((l) => l["msg"] === "whatsapp connection ended");
    expect(logged).toMatchObject({ level: 50, statusCode: 401, reason: "logged-out" });
    await e.fake.waitFor(() => !existsSync(join(e.authDir, "creds.json")), "the credentials to be deleted");
    // Sends now fail for good instead of piling up retries.
    const err = await e.adapter
      .send(
        { platform: "whatsapp", chatId: "15551234567@s.whatsapp.net" },
        { text: "x", idempotencyKey: "k" },
      )
      .catch((x: unknown) => x);
    expect(err).toMatchObject({ retryable: false });
  });

  it("rejects start() with the fix when the saved session is refused at once", async () => {
    const { e } = await withTimers();
    e.fake.script.push({ close: 401 });
    await expect(e.start()).rejects.toMatchObject({
      name: "PlatformError",
      message: expect.stringMatching(/herald whatsapp link/),
    });
  });

  it("does not reconnect after stop(), even when the socket reports its close late", async () => {
    const { e, timers } = await withTimers();
    await e.start();
    await running(e);
    const socket = e.fake.current;
    await e.adapter.stop();
    expect(socket.ended).toBe(true);
    expect(timers.pending()).toEqual([]);
    expect(e.adapter.status().state).toBe("stopped");
    await e.adapter.stop();
  });
});

describe("WhatsApp connection with the real makeWASocket", () => {
  it("treats an unreachable WhatsApp server as transient: start resolves, it keeps retrying, stop ends it", async () => {
    // A loopback port with nothing listening: the real socket's connect fails at the network edge.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    env = await whatsAppEnv({
      options: {
        socketFactory: createBaileysSocketFactory({ waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat` }),
        backoff: { baseMs: 50, maxMs: 200 },
      },
    });
    const e = env;
    await e.start();
    await e.fake.waitFor(
      () => e.lines.filter((l) => l["msg"] === "whatsapp connection closed, reconnecting").length >= 2,
      "two reconnect attempts",
    );
    expect(e.adapter.status().state).toMatch(/reconnecting|starting/);
    expect(e.lines.some((l) => Number(l["level"]) >= 50)).toBe(false);
  });
});

describe("WhatsApp auth state on disk", () => {
  it("round-trips credentials and Signal keys with Buffers, deletes nulled keys, leaves no temp files", async () => {
    const { e } = await withTimers();
    const auth = await openFileAuthState(e.authDir);
    const session = Buffer.from([1, 2, 3, 250]);
    await auth.state.keys.set({
      session: { "15551234567.0": session, "123:4@lid.1": Buffer.from("lid") },
      "app-state-sync-key": { AAAA: { keyData: Buffer.from("k"), timestamp: 7 } },
    });
    await auth.state.keys.set({ session: { "123:4@lid.1": null } });
    const reopened = await openFileAuthState(e.authDir);
    expect(reopened.state.creds.me?.id).toBe("15550001111:12@s.whatsapp.net");
    const got = await reopened.state.keys.get("session", ["15551234567.0", "123:4@lid.1"]);
    expect(got).toEqual({ "15551234567.0": session });
    const sync = await reopened.state.keys.get("app-state-sync-key", ["AAAA"]);
    expect(sync["AAAA"]).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
    const files = readdirSync(join(e.authDir, "keys"));
    expect(files.some((f) => f.endsWith(".tmp"))).toBe(false);
    expect(files).toHaveLength(2);
    expect(statSync(join(e.authDir, "creds.json")).mode & 0o077).toBe(0);
  });

  it("serialises writes to one key (last call wins) and cleans temp files a crash left", async () => {
    const { e } = await withTimers();
    writeFileSync(join(e.authDir, "creds.json.abc123.tmp"), "{ half a fi");
    const auth = await openFileAuthState(e.authDir);
    expect(existsSync(join(e.authDir, "creds.json.abc123.tmp"))).toBe(false);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        auth.state.keys.set({ "sender-key": { g: Buffer.from(`v${i}`) } }),
      ),
    );
    const got = await auth.state.keys.get("sender-key", ["g"]);
    expect(got["g"]?.toString()).toBe("v19");
  });
});
