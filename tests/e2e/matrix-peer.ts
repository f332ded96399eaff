/**
 * The other person in an encrypted Matrix room: a second matrix-js-sdk client with real Rust crypto
 * (in-memory store) on the fake homeserver. It sends encrypted messages and decrypts what the bot sends.
 */
import * as wasm from "@matrix-org/matrix-sdk-crypto-wasm";
import {
  ClientEvent,
  createClient,
  type MatrixClient,
  type MatrixEvent,
  MatrixEventEvent,
  RoomEvent,
  SyncState,
} from "matrix-js-sdk";
import { guardSdkRequests } from "../../adapters/matrix/api.js";
import type { FakeHomeserver } from "../fakes/matrix/index.js";

/** A decrypted message the peer saw from someone else. */
export interface PeerMessage {
  eventId: string;
  sender: string;
  /** The type on the wire (`m.room.encrypted` for an encrypted one). */
  wireType: string;
  content: Record<string, unknown>;
}

export interface MatrixPeer {
  client: MatrixClient;
  userId: string;
  deviceId: string;
  /** Messages from others, decrypted, in arrival order. */
  received: PeerMessage[];
  sendText(roomId: string, text: string): Promise<string>;
  /** Waits for a message from `sender` matching `match`. */
  waitFor(sender: string, match: (m: PeerMessage) => boolean, timeoutMs?: number): Promise<PeerMessage>;
  stop(): void;
}

const quiet = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  getChild() {
    return quiet;
  },
};

/** Logs `userId` in on the fake (a token for `deviceId`), starts Rust crypto and syncs. */
export async function startPeer(fake: FakeHomeserver, userId: string, deviceId: string): Promise<MatrixPeer> {
  const accessToken = `peer_${deviceId}`;
  fake.state.tokens.set(accessToken, { userId, deviceId });
  const client = createClient({ baseUrl: fake.url, accessToken, userId, deviceId, logger: quiet });
  guardSdkRequests(client);
  await client.initRustCrypto({ useIndexedDB: false });
  // initRustCrypto turns the process-wide Rust tracing to debug on the console: back to errors only.
  new wasm.Tracing(wasm.LoggerLevel.Error).turnOn();
  const received: PeerMessage[] = [];
  const record = (event: MatrixEvent) => {
    if (event.getSender() === userId || event.isDecryptionFailure()) return;
    if (event.getType() !== "m.room.message") return;
    if (received.some((m) => m.eventId === event.getId())) return;
    received.push({
      eventId: event.getId()!,
      sender: event.getSender()!,
      wireType: event.getWireType(),
      content: event.getContent(),
    });
  };
  client.on(RoomEvent.Timeline, (event) => {
    if (event.isEncrypted()) {
      event.once(MatrixEventEvent.Decrypted, () => record(event));
      void client.decryptEventIfNeeded(event).then(() => record(event));
    } else record(event);
  });
  const prepared = new Promise<void>((resolve) => {
    client.on(ClientEvent.Sync, (state) => {
      if (state === SyncState.Prepared) resolve();
    });
  });
  await client.startClient({ initialSyncLimit: 20, pollTimeout: 5000 });
  await prepared;
  return {
    client,
    userId,
    deviceId,
    received,
    async sendText(roomId, text) {
      const res = await client.sendTextMessage(roomId, text);
      return res.event_id;
    },
    waitFor(sender, match, timeoutMs = 20_000) {
      return fake.waitFor(() => received.find((m) => m.sender === sender && match(m)), timeoutMs);
    },
    stop() {
      client.stopClient();
      client.removeAllListeners();
    },
  };
}
