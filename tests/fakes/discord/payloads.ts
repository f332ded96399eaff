/**
 * Real-shaped Discord payloads for the fake, built from the scrubbed fixtures in
 * `tests/fixtures/discord/` with the fields a scenario changes overridden.
 */
import { readFileSync } from "node:fs";
import type { Json } from "./types.js";

function fixture(name: string): Json {
  return JSON.parse(readFileSync(new URL(`../../fixtures/discord/${name}.json`, import.meta.url), "utf8"));
}

const FIXTURES = {
  userBot: fixture("user-bot"),
  userAlice: fixture("user-alice"),
  gatewayBot: fixture("gateway-bot"),
  ready: fixture("ready"),
  guildCreate: fixture("guild-create"),
  messageGuild: fixture("message-create-guild"),
  thread: fixture("thread-create"),
  channelDm: fixture("channel-dm"),
  attachment: fixture("attachment"),
  messageSent: fixture("message-sent"),
  interaction: fixture("interaction-create"),
};

/** A fresh copy of a fixture. */
export function load(name: keyof typeof FIXTURES): Json {
  return structuredClone(FIXTURES[name]);
}

/** The ids of the fake's world (one guild, two text channels, two people, another bot). */
export const IDS = {
  bot: "1100000000000000001",
  guild: "1200000000000000001",
  botRole: "1300000000000000002",
  modRole: "1300000000000000003",
  general: "1400000000000000001",
  random: "1400000000000000003",
  alice: "1500000000000000001",
  bob: "1500000000000000002",
  otherBot: "1500000000000000009",
  aliceDm: "1600000000000000001",
} as const;

const DISCORD_EPOCH = 1_420_070_400_000n;
let lastSnowflake = 0n;

/** A new, increasing snowflake id (timestamp in the high bits like Discord's). */
export function snowflake(): string {
  let id = (BigInt(Date.now()) - DISCORD_EPOCH) << 22n;
  if (id <= lastSnowflake) id = lastSnowflake + 1n;
  lastSnowflake = id;
  return id.toString();
}

/** The users of the world, by id (wire shape, without `member`). */
export function worldUsers(): Map<string, Json> {
  const bot = load("userBot");
  const alice = load("userAlice");
  const bob = {
    ...load("userAlice"),
    id: IDS.bob,
    username: "bob.example",
    global_name: "Bob",
    avatar: null,
  };
  const otherBot = {
    ...load("userAlice"),
    id: IDS.otherBot,
    username: "otherbot",
    global_name: null,
    avatar: null,
    bot: true,
  };
  return new Map<string, Json>([
    [IDS.bot, bot],
    [IDS.alice, alice],
    [IDS.bob, bob],
    [IDS.otherBot, otherBot],
  ]);
}

/** The user object as it appears on messages (no private fields). */
export function publicUser(user: Json): Json {
  const { verified: _v, mfa_enabled: _m, locale: _l, email: _e, ...rest } = user;
  return rest;
}

/** A guild member object for a user (the bot has its managed role). */
export function memberOf(userId: string, joinedAt = "2025-01-10T11:00:00.000000+00:00"): Json {
  return {
    roles: userId === IDS.bot ? [IDS.botRole] : [],
    premium_since: null,
    pending: false,
    nick: null,
    mute: false,
    joined_at: joinedAt,
    flags: 0,
    deaf: false,
    communication_disabled_until: null,
    banner: null,
    avatar: null,
  };
}

/** `GET /gateway/bot` pointing at the fake's WebSocket. */
export function gatewayBot(wsUrl: string): Json {
  return { ...load("gatewayBot"), url: wsUrl };
}

/** READY for a new session. */
export function ready(sessionId: string, resumeUrl: string): Json {
  return { ...load("ready"), session_id: sessionId, resume_gateway_url: resumeUrl };
}

/** GUILD_CREATE with the current guild channels and active threads. */
export function guildCreate(channels: Json[], threads: Json[]): Json {
  return { ...load("guildCreate"), channels, threads };
}

/** A public thread in `parentId` (THREAD_CREATE shape). */
export function thread(id: string, parentId: string, name: string, ownerId: string): Json {
  const now = new Date().toISOString();
  const base = load("thread");
  return {
    ...base,
    id,
    parent_id: parentId,
    name,
    owner_id: ownerId,
    member_ids_preview: [ownerId],
    thread_metadata: { ...base["thread_metadata"], create_timestamp: now, archive_timestamp: now },
  };
}

/** A DM channel between the bot and `recipient`. */
export function dmChannel(id: string, recipient: Json): Json {
  return { ...load("channelDm"), id, recipients: [publicUser(recipient)] };
}

/** An attachment object served by the fake's CDN route. */
export function attachment(
  baseUrl: string,
  channelId: string,
  id: string,
  file: { fileName: string; size: number; contentType: string; voice?: boolean },
): Json {
  const url = `${baseUrl}/attachments/${channelId}/${id}/${encodeURIComponent(file.fileName)}?ex=67c4b1a0&hm=00`;
  const out: Json = {
    ...load("attachment"),
    id,
    filename: file.fileName,
    size: file.size,
    url,
    proxy_url: url,
    content_type: file.contentType,
  };
  if (file.voice) {
    out["duration_secs"] = 2.5;
    out["waveform"] = "AAAA";
  }
  return out;
}

/** A message object with the bot's sent-message fixture as the base. */
export function message(fields: Json): Json {
  return { ...load("messageSent"), nonce: undefined, ...fields };
}

/** INTERACTION_CREATE for a slash command typed by `user` in `channel` (guild channel, thread or DM). */
export function commandInteraction(
  id: string,
  token: string,
  name: string,
  user: Json,
  channel: Json,
  text?: string,
): Json {
  const base = load("interaction");
  const options = text === undefined ? {} : { options: [{ type: 3, name: "text", value: text }] };
  const out: Json = {
    ...base,
    id,
    token,
    data: { ...base["data"], name, ...options },
    channel_id: channel["id"],
    channel: { ...channel },
  };
  if (channel["guild_id"]) {
    out["member"] = { ...base["member"], user: publicUser(user) };
  } else {
    delete out["member"];
    delete out["guild_id"];
    delete out["guild"];
    delete out["guild_locale"];
    out["user"] = publicUser(user);
    out["context"] = 1;
    out["authorizing_integration_owners"] = { "0": user["id"] };
  }
  return out;
}

/** INTERACTION_CREATE for a click by `user` on the button `customId` of the bot's `message` in `channel`. */
export function buttonInteraction(
  id: string,
  token: string,
  customId: string,
  message: Json,
  user: Json,
  channel: Json,
): Json {
  const out = commandInteraction(id, token, "unused", user, channel);
  out["type"] = 3;
  out["data"] = { component_type: 2, custom_id: customId };
  out["message"] = structuredClone(message);
  return out;
}
