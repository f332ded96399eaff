/**
 * Herald's own routes beside the OpenAI-compatible ones, for chat clients such as `herald chat --url`:
 * `GET /v1/herald/commands`, `/v1/herald/status`, `/v1/herald/sessions` and `/v1/herald/history`
 * (`?limit=`, default 50). The last three read the chat `X-Herald-Session-Id` names, the same chat a
 * completion with that header continues; they change nothing.
 */
import type { ChatPort } from "../shared/chat-port.js";

/** A JSON answer: status and body. */
export interface HeraldAnswer {
  status: number;
  body: unknown;
}

const HISTORY_DEFAULT = 50;
const HISTORY_MAX = 500;

/**
 * Answers `GET /v1/herald/<what>` for the chat `sessionId` (undefined: the header was not sent), or
 * undefined for a path that is not one of these routes.
 */
export async function heraldRoute(
  port: ChatPort | undefined,
  path: string,
  query: URLSearchParams,
  sessionId: string | undefined,
): Promise<HeraldAnswer | undefined> {
  const what = path.slice("/v1/herald/".length);
  if (!["commands", "status", "sessions", "history"].includes(what)) return undefined;
  if (!port) return error(404, "This gateway does not serve Herald's chat routes.", "not_found");
  if (what === "commands") return { status: 200, body: { commands: port.commands() } };
  if (sessionId === undefined)
    return error(
      400,
      `GET /v1/herald/${what} reads one chat: send its id in X-Herald-Session-Id.`,
      "invalid_request_error",
    );
  const chat = { platform: "api", chatId: sessionId };
  if (what === "status") return { status: 200, body: await port.status(chat) };
  if (what === "sessions") return { status: 200, body: { sessions: port.sessions(chat) } };
  const asked = Number(query.get("limit") ?? HISTORY_DEFAULT);
  const limit = Number.isInteger(asked) && asked > 0 ? Math.min(asked, HISTORY_MAX) : HISTORY_DEFAULT;
  return { status: 200, body: { messages: port.history(chat, limit) } };
}

function error(status: number, message: string, type: string): HeraldAnswer {
  return { status, body: { error: { message, type, param: null, code: type } } };
}
