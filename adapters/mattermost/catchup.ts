/**
 * Catching up after a gap. Mattermost's WebSocket does not replay what was posted while Herald was
 * disconnected (a restart, a dropped connection), so the adapter remembers, per channel it has heard
 * from, the creation time of the newest post it handled (in its key-value store, at most
 * `MAX_CHANNELS` channels), and on every `hello` asks each for the posts since then
 * (`GET /channels/{id}/posts?since=`). They go through the same path as live events; the gateway's
 * inbound ledger answers each post id once, so a post seen live and fetched again is not answered twice.
 * Channels Herald never heard from before the gap are not searched.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { KeyValueStore } from "../../core/types.js";
import { type MattermostApi, MattermostApiError } from "./api.js";

const KEY = "catchup.channels";
/** Channels remembered at most (the least recently active are forgotten). */
const MAX_CHANNELS = 50;
/** Posts fetched per channel and gap at most (the newest are kept). */
const MAX_POSTS = 200;

interface ListedPost {
  id: string;
  user_id: string;
  create_at: number;
  delete_at?: number;
  type?: string;
}

/** The per-channel positions and the fetch of what was missed. */
export class MattermostCatchUp {
  constructor(
    private readonly api: MattermostApi,
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
  ) {}

  private positions(): Record<string, number> {
    try {
      return JSON.parse(this.kv.get(KEY) ?? "{}") as Record<string, number>;
    } catch {
      return {};
    }
  }

  /** A post of `channelId` created at `createAt` (epoch ms) was handled. */
  seen(channelId: string, createAt: number | undefined): void {
    if (createAt === undefined) return;
    const positions = this.positions();
    if ((positions[channelId] ?? 0) >= createAt) return;
    positions[channelId] = createAt;
    const kept = Object.entries(positions)
      .sort((a, b) => b[1] - a[1])
      .slice(0, MAX_CHANNELS);
    this.kv.set(KEY, JSON.stringify(Object.fromEntries(kept)));
  }

  /**
   * The `posted` event data of the posts created after the last handled one in each remembered channel,
   * oldest first per channel. Never throws: a channel that fails is logged and skipped (one the bot
   * was removed from, 403/404, is forgotten).
   */
  async missed(botId: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    const names = new Map<string, string>();
    for (const [channelId, since] of Object.entries(this.positions())) {
      try {
        const list = await this.api.call<{ order?: string[]; posts?: Record<string, ListedPost> }>(
          `channels/${encodeURIComponent(channelId)}/posts?since=${since}`,
        );
        const posts = Object.values(list?.posts ?? {})
          .filter((p) => p.create_at > since && !p.delete_at && !p.type && p.user_id !== botId)
          .sort((a, b) => a.create_at - b.create_at)
          .slice(-MAX_POSTS);
        if (!posts.length) continue;
        const channel = await this.api.call<{ type?: string }>(`channels/${encodeURIComponent(channelId)}`);
        for (const post of posts) {
          if (!names.has(post.user_id)) {
            const user = await this.api
              .call<{ username?: string }>(`users/${encodeURIComponent(post.user_id)}`)
              .catch(() => undefined);
            names.set(post.user_id, user?.username ?? "");
          }
          const name = names.get(post.user_id);
          out.push({
            channel_type: channel?.type ?? "O",
            post: JSON.stringify(post),
            ...(name ? { sender_name: `@${name}` } : {}),
          });
        }
        this.logger.info({ channelId, posts: posts.length }, "mattermost caught up on missed posts");
      } catch (err) {
        if (err instanceof MattermostApiError && (err.status === 403 || err.status === 404)) {
          const positions = this.positions();
          delete positions[channelId];
          this.kv.set(KEY, JSON.stringify(positions));
        }
        this.logger.warn(
          { channelId, error: describeError(err) },
          "mattermost catch-up failed for a channel",
        );
      }
    }
    return out;
  }
}
