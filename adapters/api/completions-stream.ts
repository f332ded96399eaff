/**
 * The streamed side of `POST /v1/chat/completions`: a request waiting for its reply, its chunks
 * (`chat.completion.chunk`, opened by the role chunk), Herald's named events, and what a reply's final
 * text adds to what the stream already showed.
 */
import type { ServerResponse } from "node:http";
import { errorBody, writeError } from "./respond.js";

/** A request waiting for its reply. */
export interface Pending {
  res: ServerResponse;
  stream: boolean;
  id: string;
  created: number;
  notices: string[];
  streamed: boolean;
  /** The client asked for a usage chunk at the end of the stream (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** The end of the text streamed so far (what the reply's text may still add to: a buttons fallback). */
  streamedTail: string;
  /** The client asked for Herald's extensions (`herald_events`): tool events and buttons as data. */
  events: boolean;
}

/**
 * What `text` adds to a stream that ended with `streamedTail`: the part after the longest paragraph
 * prefix of `text` the stream already showed (a question streamed, then its choices appended).
 */
export function unstreamedPart(text: string, streamedTail: string): string {
  if (streamedTail.endsWith(text)) return "";
  for (let at = text.lastIndexOf("\n\n"); at > 0; at = text.lastIndexOf("\n\n", at - 1)) {
    if (streamedTail.endsWith(text.slice(0, at))) return text.slice(at);
  }
  return "";
}

/** Writes one chunk (`headersOnly`: just the 200 and the opening role chunk, if not sent yet). */
export function writeChunk(
  p: Pending,
  delta: Record<string, string>,
  finish: string | null = null,
  headersOnly = false,
): void {
  if (p.res.writableEnded) return;
  if (!p.res.headersSent) {
    p.res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const first = {
      id: p.id,
      object: "chat.completion.chunk",
      created: p.created,
      model: "herald",
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
    };
    p.res.write(`data: ${JSON.stringify(first)}\n\n`);
  }
  if (headersOnly) return;
  const chunk = {
    id: p.id,
    object: "chat.completion.chunk",
    created: p.created,
    model: "herald",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  p.res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

/**
 * Writes one of Herald's named events (`event: herald.tool`), opening the stream first if needed; only
 * for requests that asked for them, since OpenAI's clients read every event as a chunk.
 */
export function writeEvent(p: Pending, name: string, data: object): void {
  if (p.res.writableEnded) return;
  if (!p.res.headersSent) writeChunk(p, {}, null, true);
  p.res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * Ends a request with an error: an HTTP status and OpenAI's `{error}` body, or, on a stream whose 200
 * is already out, OpenAI's convention of one `data: {"error": …}` event and then the end of the stream.
 */
export function failPending(
  p: Pending,
  status: number,
  message: string,
  type: string,
  code: string = type,
  retryAfterMs?: number,
  retry?: boolean,
): void {
  if (p.res.writableEnded) return;
  if (p.stream && p.res.headersSent) {
    p.res.end(`data: ${JSON.stringify(errorBody(message, type, code))}\n\n`);
    return;
  }
  writeError(p.res, status, message, type, { code, retryAfterMs, retry });
}
