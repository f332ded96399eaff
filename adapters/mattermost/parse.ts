/**
 * A `posted` event → `InboundMessage`. Chats: `mattermost:<channel id>`; in channels every message
 * lives in a thread (`threadId = root_id || post id`), so each reply goes into the thread of the message
 * it answers and each thread is its own session. In DMs `threadId` is set only when the user wrote in a
 * thread. `messageId` is the post id. A channel message addresses the bot when it holds `@<bot username>`
 * or the server lists the bot among its mentions.
 */
import type { InboundMessage } from "../../core/types.js";
import { type MattermostMe, type MattermostPost, postedDataSchema, postSchema } from "./types.js";

/** The parsed post and its message, or undefined for what Herald ignores (its own posts, system posts, empty). */
export interface ParsedPost {
  post: MattermostPost;
  message: InboundMessage;
}

/** Thrown for an event whose data does not have the documented shape (logged and skipped). */
export class MalformedEventError extends Error {
  constructor(detail: string) {
    super(`malformed posted event: ${detail}`);
    this.name = "MalformedEventError";
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Parses a `posted` event's data. @throws MalformedEventError */
export function parsePosted(data: unknown, me: MattermostMe): ParsedPost | undefined {
  const outer = postedDataSchema.safeParse(data);
  if (!outer.success) throw new MalformedEventError(outer.error.issues[0]?.message ?? "bad data");
  let postJson: unknown;
  try {
    postJson = JSON.parse(outer.data.post);
  } catch {
    throw new MalformedEventError("data.post is not JSON");
  }
  const parsed = postSchema.safeParse(postJson);
  if (!parsed.success) throw new MalformedEventError(parsed.error.issues[0]?.path.join(".") ?? "bad post");
  const post = parsed.data;
  if (post.user_id === me.id || post.type !== "") return undefined;
  const hasFiles = (post.file_ids?.length ?? 0) > 0;
  if (!post.message.trim() && !hasFiles) return undefined;

  const isDm = outer.data.channel_type === "D";
  const mentionRe = new RegExp(`(^|[^\\w.-])@${escapeRegExp(me.username)}(?![\\w-])`, "gi");
  let mentionIds: string[] = [];
  try {
    mentionIds = outer.data.mentions ? (JSON.parse(outer.data.mentions) as string[]) : [];
  } catch {
    mentionIds = [];
  }
  const mentioned = isDm || mentionRe.test(post.message) || mentionIds.includes(me.id);
  const threadId = post.root_id || (isDm ? undefined : post.id);
  const props = post.props ?? {};
  return {
    post,
    message: {
      platform: "mattermost",
      messageId: post.id,
      chat: threadId
        ? { platform: "mattermost", chatId: post.channel_id, threadId }
        : { platform: "mattermost", chatId: post.channel_id },
      chatType: isDm ? "dm" : "group",
      sender: {
        id: post.user_id,
        name: outer.data.sender_name?.replace(/^@/, "") || undefined,
        isBot: props["from_bot"] === "true" || props["from_bot"] === true || undefined,
      },
      // "thanks @herald, great" reads "thanks, great".
      text: post.message
        .replace(mentionRe, "$1")
        .replace(/[ \t]+([,.!?:;])/g, "$1")
        .replace(/[ \t]{2,}/g, " ")
        .trim(),
      mentioned,
      replyToId: post.id,
      sentAt: post.create_at,
    },
  };
}
