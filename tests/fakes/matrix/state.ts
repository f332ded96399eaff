/**
 * The fake homeserver's data: rooms as ordered event lists on one global stream, account data, access
 * tokens and the transaction-id map, plus `/sync` built from them the way Synapse builds it (an initial
 * sync gives each room's state and recent timeline; an incremental one gives what happened after `since`,
 * full state for rooms joined since then, invites as stripped state, rooms left).
 */
import { randomBytes } from "node:crypto";
import { KeyServer } from "./keys.js";
import type { RoomSpec, SentEvent, StoredEvent } from "./types.js";

export interface SyncBuild {
  body: Record<string, unknown>;
  /** Whether anything is in it (an empty incremental sync is held as a long poll). */
  empty: boolean;
}

const STRIPPED_TYPES = new Set([
  "m.room.create",
  "m.room.name",
  "m.room.join_rules",
  "m.room.encryption",
  "m.room.avatar",
  "m.room.canonical_alias",
]);

const randomId = (n = 12) => randomBytes(n).toString("base64url").replace(/[-_]/g, "x");

/** Everything the fake server knows. Mutations call `onChange` so held long polls wake up. */
export class HomeserverState {
  readonly events: StoredEvent[] = [];
  readonly rooms = new Map<string, StoredEvent[]>();
  /** token → user id and device id. */
  readonly tokens = new Map<string, { userId: string; deviceId: string }>();
  readonly displayNames = new Map<string, string>();
  readonly accountData = new Map<string, { content: Record<string, unknown>; pos: number }>();
  /** `${token}|${roomId}|${txnId}` → event id, as Synapse keeps it per device. */
  readonly txns = new Map<string, string>();
  readonly sent: SentEvent[] = [];
  readonly filters = new Map<string, unknown>();
  pos = 0;
  onChange: () => void = () => undefined;
  /** Device keys and to-device messages (end-to-end encryption). */
  readonly keys = new KeyServer(
    () => ++this.pos,
    () => this.onChange(),
  );

  constructor(readonly serverName: string) {}

  newRoomId(): string {
    return `!${randomId()}:${this.serverName}`;
  }

  /** Appends an event to a room's timeline (state events too) and returns it. */
  append(
    roomId: string,
    event: Omit<StoredEvent, "event_id" | "pos" | "roomId" | "origin_server_ts"> & {
      event_id?: string;
      origin_server_ts?: number;
    },
  ): StoredEvent {
    const stored: StoredEvent = {
      ...event,
      event_id: event.event_id ?? `$${randomId(18)}`,
      origin_server_ts: event.origin_server_ts ?? Date.now(),
      pos: ++this.pos,
      roomId,
    };
    let list = this.rooms.get(roomId);
    if (!list) {
      list = [];
      this.rooms.set(roomId, list);
    }
    list.push(stored);
    this.events.push(stored);
    this.onChange();
    return stored;
  }

  setAccountData(type: string, content: Record<string, unknown>): void {
    this.accountData.set(type, { content, pos: ++this.pos });
    this.onChange();
  }

  /** Appends a member event (with the user's display name on joins and invites). */
  member(
    roomId: string,
    userId: string,
    membership: string,
    sender = userId,
    extra: Record<string, unknown> = {},
  ): StoredEvent {
    const displayname = this.displayNames.get(userId);
    return this.append(roomId, {
      type: "m.room.member",
      state_key: userId,
      sender,
      content: { membership, ...(displayname ? { displayname } : {}), ...extra },
    });
  }

  /** Creates a room (see `RoomSpec`); returns its id. */
  createRoom(spec: RoomSpec, botUserId: string): string {
    const member = this.member.bind(this);
    const roomId = this.newRoomId();
    const creator = spec.creator ?? spec.members[0] ?? botUserId;
    this.append(roomId, {
      type: "m.room.create",
      state_key: "",
      sender: creator,
      content: { room_version: "10", creator },
    });
    member(roomId, creator, "join");
    this.append(roomId, {
      type: "m.room.join_rules",
      state_key: "",
      sender: creator,
      content: { join_rule: "invite" },
    });
    if (spec.name)
      this.append(roomId, {
        type: "m.room.name",
        state_key: "",
        sender: creator,
        content: { name: spec.name },
      });
    if (spec.encrypted) {
      this.append(roomId, {
        type: "m.room.encryption",
        state_key: "",
        sender: creator,
        content: { algorithm: "m.megolm.v1.aes-sha2" },
      });
    }
    for (const u of spec.members) if (u !== creator) member(roomId, u, "join");
    const bot = spec.bot ?? "join";
    if (bot === "join" && creator !== botUserId) member(roomId, botUserId, "join");
    if (bot === "invite")
      member(roomId, botUserId, "invite", creator, spec.isDirectInvite ? { is_direct: true } : {});
    if (spec.direct) {
      const current = (this.accountData.get("m.direct")?.content ?? {}) as Record<string, string[]>;
      const peer = spec.members.find((u) => u !== botUserId) ?? creator;
      this.setAccountData("m.direct", { ...current, [peer]: [...(current[peer] ?? []), roomId] });
    }
    return roomId;
  }

  /** Current state of a room as of stream position `atPos` (inclusive): latest event per (type, key). */
  stateAt(roomId: string, atPos = Number.POSITIVE_INFINITY): Map<string, StoredEvent> {
    const state = new Map<string, StoredEvent>();
    for (const ev of this.rooms.get(roomId) ?? []) {
      if (ev.pos > atPos) break;
      if (ev.state_key !== undefined) state.set(`${ev.type}\u0000${ev.state_key}`, ev);
    }
    return state;
  }

  /** `join`, `invite`, `leave`, `ban` or undefined, as of `atPos`. */
  membership(
    roomId: string,
    userId: string,
    atPos?: number,
  ): { membership: string; event: StoredEvent } | undefined {
    const ev = this.stateAt(roomId, atPos).get(`m.room.member\u0000${userId}`);
    const membership = ev?.content["membership"];
    return ev && typeof membership === "string" ? { membership, event: ev } : undefined;
  }

  joinedMembers(roomId: string): string[] {
    return [...this.stateAt(roomId).values()]
      .filter((e) => e.type === "m.room.member" && e.content["membership"] === "join")
      .map((e) => e.state_key!);
  }

  /** Builds `/sync` for `userId` after stream position `since` (undefined: initial sync). */
  buildSync(
    userId: string,
    token: string,
    since: number | undefined,
    timelineLimit: number,
    deviceId = "",
  ): SyncBuild {
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    const leave: Record<string, unknown> = {};
    const wire = (e: StoredEvent) => this.wire(e, token);
    for (const roomId of this.rooms.keys()) {
      const m = this.membership(roomId, userId);
      if (!m) continue;
      const changedSince = since === undefined || m.event.pos > since;
      if (m.membership === "join") {
        const all = this.rooms.get(roomId)!;
        const fresh = changedSince ? all : all.filter((e) => e.pos > (since ?? 0));
        if (fresh.length === 0) continue;
        const timeline = fresh.slice(-timelineLimit);
        const firstPos = timeline[0]!.pos;
        const state = changedSince ? [...this.stateAt(roomId, firstPos - 1).values()].map(wire) : [];
        const joined = this.joinedMembers(roomId);
        join[roomId] = {
          summary: {
            "m.joined_member_count": joined.length,
            "m.invited_member_count": 0,
            "m.heroes": joined.filter((u) => u !== userId).slice(0, 5),
          },
          state: { events: state },
          timeline: {
            events: timeline.map(wire),
            limited: fresh.length > timeline.length,
            prev_batch: `t${firstPos - 1}`,
          },
          ephemeral: { events: [] },
          account_data: { events: [] },
          unread_notifications: { notification_count: 0, highlight_count: 0 },
        };
      } else if (m.membership === "invite" && changedSince) {
        const stripped = [...this.stateAt(roomId).values()]
          .filter((e) => STRIPPED_TYPES.has(e.type) || (e.type === "m.room.member" && e.state_key === userId))
          .map((e) => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content }));
        // The inviter's own member event, so clients can show who invited them.
        const inviter = this.stateAt(roomId).get(`m.room.member\u0000${m.event.sender}`);
        if (inviter)
          stripped.push({
            type: inviter.type,
            state_key: inviter.state_key,
            sender: inviter.sender,
            content: inviter.content,
          });
        invite[roomId] = { invite_state: { events: stripped } };
      } else if (
        (m.membership === "leave" || m.membership === "ban") &&
        since !== undefined &&
        changedSince
      ) {
        leave[roomId] = { state: { events: [] }, timeline: { events: [wire(m.event)], limited: false } };
      }
    }
    const accountEvents = [...this.accountData.entries()]
      .filter(([, v]) => since === undefined || v.pos > since)
      .map(([type, v]) => ({ type, content: v.content }));
    const { empty: noCrypto, ...crypto } = this.keys.syncPart(userId, deviceId, since);
    const empty =
      noCrypto &&
      Object.keys(join).length +
        Object.keys(invite).length +
        Object.keys(leave).length +
        accountEvents.length ===
        0;
    return {
      empty,
      body: {
        next_batch: `s${this.pos}`,
        rooms: { join, invite, leave },
        account_data: { events: accountEvents },
        presence: { events: [] },
        ...crypto,
      },
    };
  }

  /** The event as `/sync` shows it to the holder of `token`. */
  wire(e: StoredEvent, token: string): Record<string, unknown> {
    const out: Record<string, unknown> = {
      type: e.type,
      event_id: e.event_id,
      sender: e.sender,
      origin_server_ts: e.origin_server_ts,
      content: e.content,
      unsigned: { age: Math.max(0, Date.now() - e.origin_server_ts) },
    };
    if (e.state_key !== undefined) out["state_key"] = e.state_key;
    if (e.txnId && this.txnOwner(e) === token)
      (out["unsigned"] as Record<string, unknown>)["transaction_id"] = e.txnId;
    return out;
  }

  private txnOwner(e: StoredEvent): string | undefined {
    for (const [key, id] of this.txns) if (id === e.event_id) return key.split("|")[0];
    return undefined;
  }
}
