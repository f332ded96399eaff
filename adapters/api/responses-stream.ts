/**
 * The server-sent events of a streamed response, in the order the openai SDK's `responses.stream()`
 * accumulates them: `response.created`, `response.in_progress`, then for the text
 * `response.output_item.added` (the message), `response.content_part.added`, `response.output_text.delta`
 * as it is written, `response.output_text.done`, `response.content_part.done`,
 * `response.output_item.done`; then each function call the client runs (`output_item.added`,
 * `function_call_arguments.delta` / `.done`, `output_item.done`); and `response.completed`, or
 * `response.failed` and an `error` event. Every event carries its `sequence_number`.
 */
import type { ServerResponse } from "node:http";
import type { ToolCall } from "../../core/types.js";
import { functionCallItem, messageItem, type ResponseObject, textPart } from "./responses-body.js";

/** Writes one response's events to `res`. */
export class ResponseEvents {
  private sequence = 0;
  /** The message item is open: its text is being written. */
  private messageOpen = false;
  private text = "";

  constructor(
    private readonly res: ServerResponse,
    private readonly messageId: string,
  ) {}

  /** The 200 and the opening events went out. */
  get started(): boolean {
    return this.res.headersSent;
  }

  /** Sends the 200 with `response.created` and `response.in_progress` (once). */
  start(snapshot: ResponseObject): void {
    if (this.res.headersSent || this.res.writableEnded) return;
    this.res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    this.event("response.created", { response: snapshot });
    this.event("response.in_progress", { response: snapshot });
  }

  /** Writes more of the message's text (opening the message first). */
  delta(delta: string): void {
    if (!delta) return;
    this.openMessage();
    this.text += delta;
    this.event("response.output_text.delta", {
      item_id: this.messageId,
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  /** The text written so far. */
  get written(): string {
    return this.text;
  }

  /** An SSE comment that keeps proxies from timing the stream out. */
  keepAlive(): void {
    if (!this.res.writableEnded) this.res.write(": keep-alive\n\n");
  }

  /**
   * Closes the message with its whole `text` (what was not written yet goes out as one more delta; a
   * text that no longer starts with what was written replaces it in `output_text.done`), writes the
   * client's calls, then `response.completed` with the response `build` makes of the output items,
   * and ends the stream. Returns that response.
   */
  complete(
    text: string,
    calls: readonly ToolCall[],
    build: (output: unknown[]) => ResponseObject,
  ): ResponseObject {
    if (text.startsWith(this.text)) this.delta(text.slice(this.text.length));
    else this.text = text;
    const output: unknown[] = [];
    if (this.messageOpen) {
      const at = { item_id: this.messageId, output_index: 0, content_index: 0 };
      this.event("response.output_text.done", { ...at, text: this.text, logprobs: [] });
      this.event("response.content_part.done", { ...at, part: textPart(this.text) });
      const item = messageItem(this.messageId, this.text);
      this.event("response.output_item.done", { output_index: 0, item });
      output.push(item);
    }
    for (const call of calls) {
      const index = output.length;
      const item = functionCallItem(call);
      this.event("response.output_item.added", {
        output_index: index,
        item: functionCallItem(call, "in_progress"),
      });
      this.event("response.function_call_arguments.delta", {
        item_id: item.id,
        output_index: index,
        delta: call.function.arguments,
      });
      this.event("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: index,
        arguments: call.function.arguments,
      });
      this.event("response.output_item.done", { output_index: index, item });
      output.push(item);
    }
    const final = build(output);
    this.event("response.completed", { response: final });
    this.res.end();
    return final;
  }

  /** Ends the stream with `response.failed` (the response with its error) and an `error` event. */
  fail(final: ResponseObject, code: string, message: string): void {
    this.event("response.failed", { response: final });
    this.event("error", { code, message, param: null });
    this.res.end();
  }

  private openMessage(): void {
    if (this.messageOpen) return;
    this.messageOpen = true;
    this.event("response.output_item.added", {
      output_index: 0,
      item: messageItem(this.messageId, "", "in_progress"),
    });
    this.event("response.content_part.added", {
      item_id: this.messageId,
      output_index: 0,
      content_index: 0,
      part: textPart(""),
    });
  }

  private event(type: string, data: object): void {
    if (this.res.writableEnded) return;
    const body = JSON.stringify({ type, sequence_number: this.sequence++, ...data });
    this.res.write(`event: ${type}\ndata: ${body}\n\n`);
  }
}
