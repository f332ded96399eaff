/**
 * `POST /v1/responses/{id}/cancel`: a background response still running is stored as `cancelled` at
 * once and its turn stopped (`/stop` in its session, as a user would); a final one is answered as it
 * is; one made without `background` is refused (400), as OpenAI refuses it.
 */
import type { ServerResponse } from "node:http";
import type { Logger } from "../../core/logger.js";
import type { InboundMessage, InboundOutcome } from "../../core/types.js";
import { uuidv7 } from "../../core/uuid-v7.js";
import { writeError, writeJson } from "./respond.js";
import { responseObject } from "./responses-body.js";
import {
  echoOfResponse,
  type ResponseKeeper,
  type ResponseParts,
  type StoredBody,
  type StoredResponse,
} from "./responses-store.js";

/**
 * Cancels a background response still running: stored as `cancelled` at once, and its turn stopped
 * (`/stop` in its session). A final one is answered as it is; one made without `background`, 400.
 */
export function cancelResponse(
  res: ServerResponse,
  found: { stored: StoredResponse; body: StoredBody },
  kept: ResponseKeeper,
  o: { submit(message: InboundMessage): Promise<InboundOutcome> | undefined; logger: Logger },
): void {
  const { stored, body } = found;
  const response = body.response;
  if (!response.background) {
    writeError(
      res,
      400,
      "Only responses created with background: true can be cancelled.",
      "invalid_request_error",
      {
        code: "invalid_request_error",
      },
    );
    return;
  }
  if (response.status !== "queued" && response.status !== "in_progress") {
    writeJson(res, 200, response);
    return;
  }
  const parts: ResponseParts = {
    id: response.id,
    itemId: response.id.replace(/^resp_/, "msg_"),
    createdAt: response.created_at,
    chatId: stored.chatId,
    userId: stored.userId,
    echo: echoOfResponse(response),
    input: body.input,
  };
  const cancelled = responseObject({ ...parts, status: "cancelled", output: [] }, parts.echo);
  kept.save(parts, cancelled);
  const stop: InboundMessage = {
    platform: "api",
    messageId: uuidv7(),
    chat: { platform: "api", chatId: stored.chatId },
    chatType: "dm",
    sender: { id: stored.userId },
    text: "/stop",
    mentioned: true,
  };
  o.submit(stop)?.catch((err: unknown) => o.logger.error({ err }, "background cancel failed"));
  writeJson(res, 200, cancelled);
}
