/**
 * Facts about rooms, read from the SDK's room state: DM or group, display names, encryption, who sent
 * an invite; and who may invite the bot (the same allowlists the gateway reads).
 */
import { EventType, type MatrixClient, type MatrixEvent, type Room } from "matrix-js-sdk";
import type { RoomFacts } from "./types.js";

/** The rooms the bot's `m.direct` account data lists, across all peers. */
export function directRoomIds(client: MatrixClient): Set<string> {
  const content = client.getAccountData(EventType.Direct)?.getContent() as
    | Record<string, unknown>
    | undefined;
  const ids = new Set<string>();
  for (const list of Object.values(content ?? {})) {
    if (Array.isArray(list)) for (const id of list) if (typeof id === "string") ids.add(id);
  }
  return ids;
}

/** A DM: listed in `m.direct`, or exactly two joined members (the bot and one person). */
export function isDirectRoom(client: MatrixClient, room: Room): boolean {
  return directRoomIds(client).has(room.roomId) || room.getJoinedMemberCount() === 2;
}

/** Whether the room has `m.room.encryption` state (its messages arrive as `m.room.encrypted`). */
export function isEncryptedRoom(room: Room): boolean {
  return room.hasEncryptionStateEvent();
}

/** The room facts `parseEvent` needs for `event`. `repliedToSender` is filled by the caller. */
export function roomFacts(
  client: MatrixClient,
  room: Room,
  event: MatrixEvent,
  botUserId: string,
): RoomFacts {
  const sender = event.getSender() ?? "";
  return {
    roomId: room.roomId,
    isDirect: isDirectRoom(client, room),
    botRoomName: room.getMember(botUserId)?.rawDisplayName || undefined,
    senderName: room.getMember(sender)?.rawDisplayName || undefined,
  };
}

/** Who invited the bot, and whether the invite says it is a DM (`is_direct`). */
export function inviteFacts(
  room: Room,
  botUserId: string,
): { inviter: string | undefined; isDirect: boolean } {
  const memberEvent = room.currentState.getMember(botUserId)?.events.member;
  return {
    inviter: room.getDMInviter() ?? memberEvent?.getSender() ?? undefined,
    isDirect: memberEvent?.getContent()["is_direct"] === true,
  };
}

/**
 * Who may invite the bot: the same rule as the gateway's allowlists — `MATRIX_ALLOWED_USERS` entries
 * (bare user ids), `GATEWAY_ALLOWED_USERS` entries written `matrix:@user:server`, or everyone with
 * `GATEWAY_ALLOW_ALL_USERS`, or whoever the gateway's own access decision admits (pairing approvals).
 */
export class InvitePolicy {
  private readonly allowed: Set<string>;

  constructor(
    allowedUsers: string[],
    private readonly allowAll: boolean,
    private readonly gatewayAllows?: ((userId: string) => boolean) | undefined,
  ) {
    this.allowed = new Set(allowedUsers.map((u) => u.trim()).filter(Boolean));
  }

  isAllowed(userId: string | undefined): boolean {
    if (this.allowAll) return true;
    if (userId === undefined) return false;
    return this.allowed.has(userId) || this.gatewayAllows?.(userId) === true;
  }
}
