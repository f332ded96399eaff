/**
 * Mattermost's side of streamed replies (`stream: edit`): preview posts created in the reply's thread
 * and edited with `PUT /posts/{id}`, at most one call a second per reply, none while the REST budget
 * has no slot free.
 */
import type { Logger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import { type MattermostApi, MattermostApiError } from "./api.js";
import { mattermostChunks } from "./format.js";

/** Minimum time between two preview calls of one reply. */
const INTERVAL_MS = 1000;

/** Creates a post in the chat (its thread, when it has one); resolves to its id. */
export async function createPost(
  api: MattermostApi,
  chat: ChatRef,
  message: string,
  options: { fileIds?: string[]; signal?: AbortSignal | undefined } = {},
): Promise<string> {
  const post = await api.call<{ id: string }>("posts", {
    method: "POST",
    body: {
      channel_id: chat.chatId,
      message,
      ...(chat.threadId ? { root_id: chat.threadId } : {}),
      ...(options.fileIds?.length ? { file_ids: options.fileIds } : {}),
    },
    signal: options.signal,
  });
  return post.id;
}

/** Replaces a post's text; false when the post is gone (deleted by someone). */
export async function updatePost(api: MattermostApi, id: string, message: string): Promise<boolean> {
  try {
    await api.call(`posts/${encodeURIComponent(id)}`, { method: "PUT", body: { id, message } });
    return true;
  } catch (err) {
    if (err instanceof MattermostApiError && err.status === 404) return false;
    throw err;
  }
}

/** Deletes a post; one already gone is not an error. */
export async function deletePost(api: MattermostApi, id: string): Promise<void> {
  try {
    await api.call(`posts/${encodeURIComponent(id)}`, { method: "DELETE" });
  } catch (err) {
    if (err instanceof MattermostApiError && err.status === 404) return;
    throw err;
  }
}

/** The previews of one Mattermost adapter. The turn events name the inbound post by its id. */
export function mattermostStreams(
  api: MattermostApi,
  kv: KeyValueStore,
  logger: Logger,
): ReplyStreams<string> {
  return new ReplyStreams<string>({
    kv,
    logger,
    nativeId: (id) => id,
    platform: {
      chunks: (markdown) => mattermostChunks(markdown),
      post: (chat, chunk) => createPost(api, chat, chunk),
      edit: async (_chat, id, chunk) => {
        await updatePost(api, id, chunk);
      },
      remove: (_chat, id) => deletePost(api, id),
      waitMs: () => api.waitMs(),
      intervalMs: () => INTERVAL_MS,
    },
  });
}
