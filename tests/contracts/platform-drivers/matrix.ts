/**
 * The Matrix driver of the PlatformAdapter contract: the real adapter (matrix-js-sdk) against the fake
 * homeserver. An edit is an `m.replace` event, as on a real homeserver; what a room shows for a message
 * is its latest replacement's `m.new_content`.
 */

import { DEFAULT_MAX_MESSAGE_CHARS } from "../../../adapters/matrix/format.js";
import { createMatrixAdapter, type MatrixAdapter } from "../../../adapters/matrix/index.js";
import { silentLogger } from "../../../core/logger.js";
import { ALICE, startMatrixEnv } from "../../e2e/matrix-env.js";
import type { SentEvent } from "../../fakes/matrix/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";

const relation = (event: SentEvent) =>
  event.content["m.relates_to"] as { rel_type?: string; event_id?: string } | undefined;

export const matrixDriver: PlatformDriver = {
  platform: "matrix",
  abilities: { edit: true, deleteMessage: true, sendTyping: true, status: true },
  maxChars: DEFAULT_MAX_MESSAGE_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 1500 },
    authFailed: { code: "platform_auth_failed" },
    // A homeserver answers a send to a room the bot is not in (or that does not exist) with 403 M_FORBIDDEN.
    notFound: { code: "platform_error" },
  },
  async setup() {
    const env = await startMatrixEnv();
    const room = env.fake.createRoom({ members: [ALICE], direct: true });
    const adapter: MatrixAdapter = createMatrixAdapter(env.config(), {
      logger: silentLogger(),
      homeDir: env.cacheDir,
      cacheDir: env.cacheDir,
      kv: env.kv,
    });
    const sendPath = "/send/m.room.message/";
    const messages = () => env.fake.messages(room).filter((e) => relation(e)?.rel_type !== "m.replace");
    return {
      adapter,
      chat: { platform: "matrix", chatId: room },
      delivered: () => messages().map((e) => ({ id: e.eventId, text: String(e.content["body"]) })),
      currentText: (id) => {
        const edit = env.fake
          .messages(room)
          .findLast((e) => relation(e)?.rel_type === "m.replace" && relation(e)?.event_id === id);
        const content = edit
          ? (edit.content["m.new_content"] as Record<string, unknown>)
          : messages().find((e) => e.eventId === id)?.content;
        return content === undefined ? undefined : String(content["body"]);
      },
      isDeleted: (id) =>
        env.fake.sent.some((e) => e.type === "m.room.redaction" && e.content["redacts"] === id),
      rateLimitNextSend: () =>
        env.fake.fail({
          method: "PUT",
          path: sendPath,
          status: 429,
          body: { errcode: "M_LIMIT_EXCEEDED", error: "Too Many Requests", retry_after_ms: 1500 },
        }),
      refuseAuthOnNextSend: () =>
        env.fake.fail({
          method: "PUT",
          path: sendPath,
          status: 401,
          body: { errcode: "M_UNKNOWN_TOKEN", error: "Invalid access token passed." },
        }),
      unknownChat: () => ({ platform: "matrix", chatId: "!nosuchroom:localhost" }),
      async close() {
        await adapter.stop();
        await env.close();
      },
    };
  },
};
