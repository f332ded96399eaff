/**
 * The fake Discord's world: users, channels (guild text channels, threads, DMs), messages, the nonce
 * memory of `enforce_nonce`, stored attachment bytes, and what the bot posted with whom it pinged.
 */
import * as P from "./payloads.js";
import type { Json, Pings, PostedMessage, RecordedFile } from "./types.js";

const MENTION_USER = /<@!?(\d+)>/g;
const MENTION_ROLE = /<@&(\d+)>/g;
const EVERYONE = /@(everyone|here)\b/;

/** Users mentioned (`<@id>`), roles mentioned (`<@&id>`), and whether `@everyone`/`@here` appears. */
export function parseMentions(content: string): { users: string[]; roles: string[]; everyone: boolean } {
  const users = [...new Set([...content.matchAll(MENTION_USER)].map((m) => m[1]!))];
  const roles = [...new Set([...content.matchAll(MENTION_ROLE)].map((m) => m[1]!))];
  return { users, roles, everyone: EVERYONE.test(content) };
}

/**
 * Who a message notifies, by Discord's allowed_mentions rules: absent → everything in the content;
 * present → only the `parse` kinds and the listed ids; `replied_user` adds the replied-to author.
 */
export function computePings(content: string, allowed: Json | undefined, repliedAuthor?: string): Pings {
  const found = parseMentions(content);
  if (!allowed) {
    const users = repliedAuthor ? [...new Set([...found.users, repliedAuthor])] : found.users;
    return { everyone: found.everyone, roles: found.roles, users };
  }
  const parse: string[] = Array.isArray(allowed["parse"]) ? allowed["parse"] : [];
  const allowedUsers: string[] = Array.isArray(allowed["users"]) ? allowed["users"] : [];
  const allowedRoles: string[] = Array.isArray(allowed["roles"]) ? allowed["roles"] : [];
  const users = found.users.filter((u) => parse.includes("users") || allowedUsers.includes(u));
  if (repliedAuthor && allowed["replied_user"] === true && !users.includes(repliedAuthor)) {
    users.push(repliedAuthor);
  }
  return {
    everyone: found.everyone && parse.includes("everyone"),
    roles: found.roles.filter((r) => parse.includes("roles") || allowedRoles.includes(r)),
    users,
  };
}

/** A slash command a user ran, and the bot's answer to it. */
export interface FakeInteraction {
  id: string;
  token: string;
  name: string;
  channelId: string;
  /** Callback types the bot sent (5 deferred, 4 message). */
  callbacks: number[];
  /** Content of the reply (`@original`), once the bot gave one. */
  reply: string | undefined;
  /** The placeholder/reply was deleted. */
  deleted: boolean;
}

/** Mutable world state shared by the REST routes and the test helpers. */
export class FakeWorld {
  readonly users = P.worldUsers();
  /** Channel id → channel object (guild text channels, threads, DM channels). */
  readonly channels = new Map<string, Json>();
  /** Message id → message object. */
  readonly messages = new Map<string, Json>();
  /** Bot messages in creation order. */
  readonly posted: PostedMessage[] = [];
  /** Typing calls, by channel id, in order. */
  readonly typing: string[] = [];
  /** `${authorId}:${nonce}` → { message id, when }. */
  readonly nonces = new Map<string, { messageId: string; at: number }>();
  /** CDN path → bytes and type. */
  readonly blobs = new Map<string, { data: Buffer; contentType: string }>();
  /** Slash command interactions and how the bot answered them. */
  readonly interactions = new Map<string, FakeInteraction>();
  /** Application commands as last registered (bulk overwrite). */
  commands: Json[] = [];

  constructor(readonly baseUrl: string) {
    for (const channel of P.load("guildCreate")["channels"] as Json[]) {
      this.channels.set(channel["id"], { ...channel, guild_id: P.IDS.guild });
    }
    this.channels.set(P.IDS.aliceDm, P.dmChannel(P.IDS.aliceDm, this.user(P.IDS.alice)));
  }

  user(id: string): Json {
    const user = this.users.get(id);
    if (!user) throw new Error(`fake discord: unknown user ${id}`);
    return P.publicUser(user);
  }

  /** Guild channels (not threads) for GUILD_CREATE. */
  guildChannels(): Json[] {
    return [...this.channels.values()]
      .filter((c) => c["guild_id"] && (c["type"] === 0 || c["type"] === 15) && !c["parent_id"])
      .map(({ guild_id: _g, ...c }) => c);
  }

  /** Active threads for GUILD_CREATE. */
  threads(): Json[] {
    return [...this.channels.values()].filter((c) => c["type"] === 11 || c["type"] === 12);
  }

  /** The DM channel between the bot and `userId`, created when missing. */
  dmWith(userId: string): Json {
    for (const c of this.channels.values()) {
      if (c["type"] === 1 && c["recipients"]?.[0]?.id === userId) return c;
    }
    const channel = P.dmChannel(P.snowflake(), this.user(userId));
    this.channels.set(channel["id"], channel);
    return channel;
  }

  /** A message in `channelId` by `authorId`, with mentions resolved like Discord does. */
  buildMessage(channelId: string, authorId: string, content: string, extra: Json = {}): Json {
    const channel = this.channels.get(channelId);
    if (!channel) throw new Error(`fake discord: unknown channel ${channelId}`);
    const guildId: string | undefined = channel["guild_id"];
    const found = parseMentions(content);
    const mentions = found.users
      .filter((id) => this.users.has(id))
      .map((id) => (guildId ? { ...this.user(id), member: P.memberOf(id) } : this.user(id)));
    const message: Json = P.message({
      id: P.snowflake(),
      type: 0,
      channel_id: channelId,
      channel_type: channel["type"],
      author: this.user(authorId),
      content,
      mentions,
      mention_roles: guildId ? found.roles : [],
      mention_everyone: found.everyone,
      timestamp: new Date().toISOString(),
      ...extra,
    });
    if (guildId) {
      message["guild_id"] = guildId;
      message["member"] = P.memberOf(authorId);
    }
    return message;
  }

  /** Adds reply fields (`message_reference`, `referenced_message`, type 19) to `message`. */
  makeReply(message: Json, replyTo: string): void {
    const original = this.messages.get(replyTo);
    message["type"] = 19;
    message["message_reference"] = {
      type: 0,
      channel_id: message["channel_id"],
      message_id: replyTo,
      ...(message["guild_id"] ? { guild_id: message["guild_id"] } : {}),
    };
    message["referenced_message"] = original ?? null;
    const author = original?.["author"];
    if (author && !message["mentions"].some((u: Json) => u["id"] === author["id"])) {
      message["mentions"].push(author);
    }
  }

  /** Stores bytes under the CDN and returns the attachment object. */
  storeAttachment(
    channelId: string,
    file: { fileName: string; data: Buffer; contentType: string; declaredSize?: number; voice?: boolean },
  ): Json {
    const id = P.snowflake();
    const att = P.attachment(this.baseUrl, channelId, id, {
      fileName: file.fileName,
      size: file.declaredSize ?? file.data.length,
      contentType: file.contentType,
      ...(file.voice ? { voice: true } : {}),
    });
    this.blobs.set(`/attachments/${channelId}/${id}/${encodeURIComponent(file.fileName)}`, {
      data: file.data,
      contentType: file.contentType,
    });
    return att;
  }

  /** Records a bot message (after the REST route built it). */
  recordPosted(message: Json, body: Json, files: RecordedFile[]): PostedMessage {
    const replyTo: string | undefined = body["message_reference"]?.message_id;
    const repliedAuthor = replyTo ? this.messages.get(replyTo)?.["author"]?.id : undefined;
    const posted: PostedMessage = {
      id: message["id"],
      channelId: message["channel_id"],
      content: message["content"],
      nonce: body["nonce"] === undefined ? undefined : String(body["nonce"]),
      replyTo,
      allowedMentions: body["allowed_mentions"],
      pings: computePings(message["content"], body["allowed_mentions"], repliedAuthor),
      files,
      currentContent: message["content"],
      components: message["components"] ?? [],
      edits: [],
      deleted: false,
    };
    this.posted.push(posted);
    return posted;
  }
}
