/**
 * The receiving side: live timeline events after the first sync become `InboundMessage`s (initial-sync
 * and cached history never do), invites are accepted or declined. An encrypted message is decrypted when
 * encryption is on (waiting a while for a room key that arrives after the message), else its room gets
 * one notice that this bot cannot read it. Each inbound handler run is registered with the store, which
 * saves the `since` token only after the gateway recorded every message it covers.
 */
import {
  ClientEvent,
  EventType,
  type MatrixClient,
  type MatrixEvent,
  MatrixEventEvent,
  type Room,
  RoomEvent,
  SyncState,
} from "matrix-js-sdk";
import type { Logger } from "../../core/logger.js";
import type { InboundHandler, KeyValueStore } from "../../core/types.js";
import type { MatrixApi } from "./api.js";
import { describeMatrixError } from "./errors.js";
import { downloadMedia } from "./media.js";
import { parseEvent } from "./parse.js";
import { directRoomIds, InvitePolicy, inviteFacts, isEncryptedRoom, roomFacts } from "./rooms.js";
import type { KvSyncStore } from "./store.js";
import type { BotIdentity, MatrixAdapterConfig } from "./types.js";

export interface ReceiverDeps {
  client: MatrixClient;
  api: MatrixApi;
  store: KvSyncStore;
  identity: BotIdentity;
  config: MatrixAdapterConfig;
  kv: KeyValueStore;
  log: Logger;
  onMessage: InboundHandler;
  /** The gateway's access decision (allowlists and approved pairing); invites from allowed users are joined. */
  isAllowed?: ((userId: string) => boolean) | undefined;
  /** Whether the client runs Rust crypto and can decrypt. */
  decrypts: boolean;
  /** Sends a plain notice into a room (even an encrypted one). May throw. */
  sendNotice(roomId: string, text: string): Promise<void>;
}

/** Said once per encrypted room. */
export const ENCRYPTION_NOTICE =
  "🔒 This room is end-to-end encrypted, and encryption support is not enabled on this Herald, so I cannot read messages here. Please talk to me in an unencrypted room or DM.";

const OWN_EVENTS_KEPT = 500;
/** How long an undecryptable message waits for its room key (sent to-device, possibly after it). */
const DECRYPT_WAIT_MS = 30_000;
const RECORD_ATTEMPTS = 3;

export class MatrixReceiver {
  private live = false;
  private readonly own = new Set<string>();
  private readonly invitesSeen = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly policy: InvitePolicy;
  /** Aborted on detach: ends waits for room keys. */
  private readonly detached = new AbortController();

  constructor(private readonly deps: ReceiverDeps) {
    this.policy = new InvitePolicy(
      deps.config.allowedUsers,
      deps.config.allowAllUsers === true,
      deps.isAllowed,
    );
  }

  attach(): void {
    const { client } = this.deps;
    client.on(ClientEvent.Sync, this.onSync);
    client.on(RoomEvent.Timeline, this.onTimeline);
    client.on(RoomEvent.MyMembership, this.onMyMembership);
  }

  detach(): void {
    this.live = false;
    this.detached.abort();
    const { client } = this.deps;
    client.off(ClientEvent.Sync, this.onSync);
    client.off(RoomEvent.Timeline, this.onTimeline);
    client.off(RoomEvent.MyMembership, this.onMyMembership);
  }

  /** Waits for handler runs in flight (stop). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Remembers an event the bot sent (a reply to it counts as addressing the bot). */
  rememberOwn(eventId: string): void {
    this.own.add(eventId);
    if (this.own.size > OWN_EVENTS_KEPT) this.own.delete(this.own.values().next().value!);
  }

  private run(work: Promise<void>, track: boolean): void {
    if (track) this.deps.store.track(work);
    const p = work.catch(() => undefined);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  private readonly onSync = (state: SyncState): void => {
    if (state !== SyncState.Prepared || this.live) return;
    // Everything before this point is history (initial sync) or already handled (saved sync).
    this.live = true;
    for (const room of this.deps.client.getRooms()) {
      if (room.getMyMembership() === "invite") this.run(this.handleInvite(room), false);
    }
  };

  private readonly onMyMembership = (room: Room, membership: string): void => {
    if (this.live && membership === "invite") this.run(this.handleInvite(room), false);
  };

  private readonly onTimeline = (
    event: MatrixEvent,
    room: Room | undefined,
    toStartOfTimeline: boolean | undefined,
    removed: boolean,
    data: { liveEvent?: boolean },
  ): void => {
    if (!this.live || !room || toStartOfTimeline || removed || !data.liveEvent) return;
    const me = this.deps.identity.userId;
    if (event.getSender() === me) return;
    // The live state, not getMyMembership(): the SDK updates that only after a new room's events.
    if ((room.currentState.getMember(me)?.membership ?? room.getMyMembership()) !== "join") return;
    const type = event.getType();
    if (event.isEncrypted() && this.deps.decrypts)
      this.run(
        this.inOrder(room.roomId, () => this.handleEncrypted(event, room)),
        true,
      );
    else if (type === "m.room.encrypted") this.run(this.encryptionNotice(room), false);
    else if (type === "m.room.message")
      this.run(
        this.inOrder(room.roomId, () => this.handleMessage(event, room)),
        true,
      );
  };

  /** Runs `work` after the room's earlier messages, so the gateway sees a room's messages in order. */
  private inOrder(roomId: string, work: () => Promise<void>): Promise<void> {
    const previous = this.chains.get(roomId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.chains.set(roomId, tail);
    void tail.then(() => {
      if (this.chains.get(roomId) === tail) this.chains.delete(roomId);
    });
    return next;
  }

  private async handleMessage(event: MatrixEvent, room: Room): Promise<void> {
    const { client, identity, log } = this.deps;
    const facts = roomFacts(client, room, event, identity.userId);
    const raw = event.getEffectiveEvent();
    const relation = event.getContent()["m.relates_to"] as
      | { is_falling_back?: unknown; "m.in_reply_to"?: { event_id?: unknown } }
      | undefined;
    const replyTo = relation?.is_falling_back === true ? undefined : relation?.["m.in_reply_to"]?.event_id;
    if (typeof replyTo === "string") facts.repliedToSender = await this.senderOf(room, replyTo);
    const result = parseEvent(raw, facts, identity);
    if (result.kind === "skip") {
      if (result.reason === "malformed")
        log.warn({ eventId: event.getId(), roomId: room.roomId }, "malformed matrix event skipped");
      else log.debug({ eventId: event.getId(), reason: result.reason }, "matrix event not passed on");
      return;
    }
    const message = result.message;
    if (result.media) {
      const attachment = await downloadMedia(this.deps, result.media);
      if (attachment) message.attachments = [attachment];
      else if (!message.text)
        message.text = `[${result.media.kind} "${result.media.fileName}" was not downloaded: too large or unavailable]`;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await this.deps.onMessage(message);
        return;
      } catch (err) {
        if (attempt >= RECORD_ATTEMPTS) {
          log.error(
            { eventId: message.messageId, err: (err as Error).message },
            "matrix message not recorded by the gateway",
          );
          throw err;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }

  private async handleEncrypted(event: MatrixEvent, room: Room): Promise<void> {
    if (!(await this.decrypted(event))) {
      this.deps.log.warn(
        { eventId: event.getId(), roomId: room.roomId, reason: event.decryptionFailureReason },
        "matrix message could not be decrypted (no room key arrived)",
      );
      return;
    }
    if (event.getType() === "m.room.message") await this.handleMessage(event, room);
  }

  /**
   * Whether `event` is (or within DECRYPT_WAIT_MS becomes) decrypted. Rejects when the adapter stops
   * meanwhile, so the sync token stays before the message and the next start tries again.
   */
  private async decrypted(event: MatrixEvent): Promise<boolean> {
    await this.deps.client.decryptEventIfNeeded(event);
    if (!event.isDecryptionFailure()) return true;
    // The SDK retries by itself when the missing room key arrives.
    return new Promise((resolve, reject) => {
      const finish = (ok: boolean | Error) => {
        clearTimeout(timer);
        event.off(MatrixEventEvent.Decrypted, onDecrypted);
        this.detached.signal.removeEventListener("abort", onDetach);
        if (ok instanceof Error) reject(ok);
        else resolve(ok);
      };
      const onDecrypted = () => {
        if (!event.isDecryptionFailure()) finish(true);
      };
      const onDetach = () => finish(new Error("stopped while waiting for a room key"));
      const timer = setTimeout(() => finish(false), DECRYPT_WAIT_MS);
      timer.unref();
      event.on(MatrixEventEvent.Decrypted, onDecrypted);
      if (this.detached.signal.aborted) onDetach();
      else this.detached.signal.addEventListener("abort", onDetach);
    });
  }

  /** Who sent `eventId`: the bot's own sends, the room's timeline, else one fetch. */
  private async senderOf(room: Room, eventId: string): Promise<string | undefined> {
    if (this.own.has(eventId)) return this.deps.identity.userId;
    const local = room.findEventById(eventId)?.getSender();
    if (local) return local;
    try {
      const ev = await this.deps.api.fetchEvent(room.roomId, eventId);
      return typeof ev.sender === "string" ? ev.sender : undefined;
    } catch {
      return undefined;
    }
  }

  private async handleInvite(room: Room): Promise<void> {
    const { api, client, log, identity } = this.deps;
    if (this.invitesSeen.has(room.roomId)) return;
    this.invitesSeen.add(room.roomId);
    const { inviter, isDirect } = inviteFacts(room, identity.userId);
    const allowed = this.policy.isAllowed(inviter);
    try {
      if (!allowed) {
        await api.leave(room.roomId);
        log.info({ roomId: room.roomId, inviter }, "matrix invite declined: inviter not allowed");
        return;
      }
      await api.join(room.roomId);
      log.info({ roomId: room.roomId, inviter, isDirect }, "matrix invite accepted");
      if (isDirect && inviter) {
        // Keep the room in m.direct, as clients do on accepting a DM, so it stays a DM later.
        const current = client.getAccountData(EventType.Direct)?.getContent() as
          | Record<string, string[]>
          | undefined;
        if (!directRoomIds(client).has(room.roomId)) {
          const list = [...(current?.[inviter] ?? []), room.roomId];
          await api.setAccountData("m.direct", { ...current, [inviter]: list });
        }
      }
    } catch (err) {
      // Try again on the next start (the invite is still pending then).
      this.invitesSeen.delete(room.roomId);
      log.warn({ roomId: room.roomId, err: describeMatrixError(err) }, "matrix invite not handled");
    }
  }

  private async encryptionNotice(room: Room): Promise<void> {
    const { kv, log } = this.deps;
    if (!isEncryptedRoom(room)) return;
    const key = `e2ee-notice:${room.roomId}`;
    if (kv.get(key)) return;
    kv.set(key, String(Date.now()));
    try {
      await this.deps.sendNotice(room.roomId, ENCRYPTION_NOTICE);
      log.warn(
        { roomId: room.roomId, fix: "set MATRIX_ENCRYPTION=true" },
        "encrypted matrix room: told the room encryption is not enabled",
      );
    } catch (err) {
      kv.delete(key);
      log.warn({ roomId: room.roomId, err: describeMatrixError(err) }, "encryption notice not sent");
    }
  }
}
