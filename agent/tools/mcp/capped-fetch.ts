/**
 * The bound on what one MCP message may cost. The SDK's stdio transport stops at a buffer size (it
 * then closes the connection); its HTTP transports read a JSON answer whole and an SSE event whole,
 * however large: a server relaying a 300 MB page would have Herald hold all of it. `cappedFetch` is
 * the `fetch` they are given: it errors a body past the bound.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { HeraldError } from "../../../core/errors.js";

/** Bytes one MCP message (a JSON answer, an SSE event, a stdio line) may have. */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;

/** A message over the bound: the call that would have received it fails with this. */
export class McpMessageTooLargeError extends HeraldError {
  constructor(server: string, maxBytes: number) {
    const mb = Math.round(maxBytes / 1024 / 1024);
    super(
      `MCP server '${server}' sent a message over ${mb} MB; Herald stopped reading it. Ask the tool for less at once (a narrower query, a smaller page or file).`,
      { code: "tool_error" },
    );
    this.name = "McpMessageTooLargeError";
  }
}

/** Which SSE bytes end an event: a blank line ("\n\n", or "\r\n\r\n" whose tail is "\n\n"). */
function lastEventEnd(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== 10) continue;
    if (bytes[i - 1] === 10 || (bytes[i - 1] === 13 && bytes[i - 2] === 10)) return i;
  }
  return -1;
}

/** Options of {@link cappedFetch}. */
export interface CappedFetchOptions {
  /** @defaultValue MAX_MCP_MESSAGE_BYTES */
  maxBytes?: number;
  /**
   * Told when a body went past the bound, before the body errors. The SDK hears of an SSE stream's
   * error only through `onerror` (the call would wait for its timeout): the caller closes the
   * connection here. Must not throw.
   */
  onTooLarge?: () => void;
  /** @defaultValue the global fetch */
  base?: FetchLike;
}

/**
 * `fetch` with every response body bounded: an SSE stream (`text/event-stream`, long-lived) to
 * `maxBytes` per event, any other body to `maxBytes` in all. Past it the body errors with
 * `McpMessageTooLargeError` (its connection is dropped).
 */
export function cappedFetch(server: string, options: CappedFetchOptions = {}): FetchLike {
  const { maxBytes = MAX_MCP_MESSAGE_BYTES, onTooLarge, base = fetch } = options;
  return async (url, init) => {
    const res = await base(url, init);
    if (!res.body) return res;
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      onTooLarge?.();
      throw new McpMessageTooLargeError(server, maxBytes);
    }
    const perEvent = (res.headers.get("content-type") ?? "").includes("text/event-stream");
    let seen = 0;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          const end = perEvent ? lastEventEnd(chunk) : -1;
          // The event that ends in this chunk, then the one it starts (or all of it: one message).
          const over = end >= 0 ? seen + end + 1 > maxBytes : seen + chunk.length > maxBytes;
          seen = end >= 0 ? chunk.length - end - 1 : seen + chunk.length;
          if (!over && seen <= maxBytes) return controller.enqueue(chunk);
          onTooLarge?.();
          controller.error(new McpMessageTooLargeError(server, maxBytes));
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
