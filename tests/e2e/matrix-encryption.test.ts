/**
 * End-to-end encrypted Matrix rooms through the whole gateway: the fake homeserver (with device keys,
 * one-time keys and to-device messages), Herald configured by env with MATRIX_ENCRYPTION=true, the
 * scripted fake model, and Alice as a second matrix-js-sdk client running real Rust crypto. Alice's
 * encrypted message reaches the model; Herald's reply is encrypted and Alice decrypts it; after a
 * restart Herald is the same device with the same keys, and both directions still decrypt.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeHomeserver, startFakeHomeserver } from "../fakes/matrix/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { ALICE } from "./matrix-env.js";
import { type MatrixPeer, startPeer } from "./matrix-peer.js";

const running = platformPerTest<FakeHomeserver>();
let peer: MatrixPeer | undefined;
afterEach(() => {
  peer?.stop();
  peer = undefined;
});

async function start(env: Record<string, string> = {}) {
  const fake = running.trackFake(await startFakeHomeserver());
  fake.setDisplayName(ALICE, "Alice");
  const h = await running.startHarness({
    env: {
      MATRIX_HOMESERVER: fake.url,
      MATRIX_ACCESS_TOKEN: fake.botAccessToken,
      MATRIX_ALLOWED_USERS: ALICE,
      MATRIX_STREAM: "off",
      MATRIX_ENCRYPTION: "true",
      ...env,
    },
  });
  const running_ = () => h.gateway.adapters.get("matrix")?.status?.().state === "running";
  await fake.waitFor(running_, 20_000);
  return { fake, h, ready: () => fake.waitFor(running_, 20_000) };
}

/** The bot's uploaded identity keys (`curve25519:…`, `ed25519:…`) for its one device. */
function botKeys(fake: FakeHomeserver): { deviceIds: string[]; keys: unknown } {
  const devices = fake.state.keys.devices.get(fake.botUserId) ?? new Map();
  const first = [...devices.values()][0] as { keys: Record<string, unknown> } | undefined;
  return { deviceIds: [...devices.keys()], keys: first?.keys["keys"] };
}

describe("matrix end-to-end encryption through the gateway", () => {
  it("answers an encrypted DM with an encrypted reply, and again after a restart on the same device", async () => {
    const { fake, h, ready } = await start({ MATRIX_STORE_KEY: "correct horse battery staple" });
    await fake.waitFor(() => botKeys(fake).keys);
    const identity = botKeys(fake);
    peer = await startPeer(fake, ALICE, "ALICEPHONE");
    const room = fake.createRoom({ members: [ALICE], direct: true, encrypted: true });
    await fake.waitFor(() => peer!.client.getRoom(room));

    const asked = await peer.sendText(room, "what is the secret word?");
    const reply = await peer.waitFor(fake.botUserId, (m) =>
      String(m.content["body"]).includes("secret word"),
    );
    expect(reply.wireType).toBe("m.room.encrypted");
    expect(reply.content).toMatchObject({
      body: "echo: what is the secret word?",
      "m.relates_to": { "m.in_reply_to": { event_id: asked } },
    });
    expect(JSON.stringify(h.llm.requests[0]?.messages)).toContain("what is the secret word?");
    // Nothing readable reached the homeserver: every event the bot sent in the room is encrypted.
    const inRoom = fake.sent.filter((e) => e.roomId === room);
    expect(inRoom.length).toBeGreaterThan(0);
    expect(inRoom.every((e) => e.type === "m.room.encrypted")).toBe(true);
    expect(JSON.stringify(inRoom)).not.toContain("secret word");

    await h.restart();
    await ready();
    const asked2 = await peer.sendText(room, "still there after the restart?");
    const reply2 = await peer.waitFor(fake.botUserId, (m) => String(m.content["body"]).includes("restart"));
    expect(reply2.content).toMatchObject({
      body: "echo: still there after the restart?",
      "m.relates_to": { "m.in_reply_to": { event_id: asked2 } },
    });
    // Same device, same identity keys (a new key for the same device id would be refused with 400).
    expect(botKeys(fake)).toEqual(identity);
    expect(h.llm.requests).toHaveLength(2);
    const store = join(h.homeDir, "matrix-crypto", "_herald_localhost.BOTDEVICE.sqlite");
    expect(existsSync(store)).toBe(true);
  });

  it("answers a message whose room key arrives after it", async () => {
    const { fake, h } = await start();
    await fake.waitFor(() => botKeys(fake).keys);
    peer = await startPeer(fake, ALICE, "ALICEPHONE");
    const room = fake.createRoom({ members: [ALICE], direct: true, encrypted: true });
    await fake.waitFor(() => peer!.client.getRoom(room));
    fake.state.keys.hold(fake.botUserId);
    const asked = await peer.sendText(room, "key comes later");
    // Herald has synced the encrypted message without its key: nothing reached the model.
    const pos = fake.state.rooms.get(room)!.find((e) => e.event_id === asked)!.pos;
    await fake.waitFor(() =>
      fake.syncs().some((r) => r.userId === fake.botUserId && Number(r.query["since"]?.slice(1)) >= pos),
    );
    expect(h.llm.requests).toHaveLength(0);
    fake.state.keys.release(fake.botUserId);
    const reply = await peer.waitFor(fake.botUserId, (m) => String(m.content["body"]).includes("later"));
    expect(reply.content["body"]).toBe("echo: key comes later");
  });

  it("without MATRIX_ENCRYPTION an encrypted room gets one notice and no plaintext reply", async () => {
    const { fake, h } = await start({ MATRIX_ENCRYPTION: "false" });
    const room = fake.createRoom({ members: [ALICE], direct: true, encrypted: true });
    fake.injectEvent(room, {
      type: "m.room.encrypted",
      sender: ALICE,
      content: { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "AwgA", session_id: "s", sender_key: "k" },
    });
    const [notice] = await fake.waitForMessages(1, room);
    expect(notice!.content["msgtype"]).toBe("m.notice");
    expect(String(notice!.content["body"])).toContain("end-to-end encrypted");
    expect(h.llm.requests).toHaveLength(0);
  });
});
