/**
 * The event stream of signal-cli's HTTP daemon (`GET /api/v1/events`, Server-Sent Events). Each event
 * has an id; reconnecting with `Last-Event-ID` resumes after it (signal-cli keeps the last 1000). The
 * stream reconnects with backoff (1 s doubling to 30 s) until stopped; handlers run one at a time, in
 * order, and an event's id is passed on only after its handler resolved.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";

/** One server-sent event. */
export interface SseEvent {
  id?: string | undefined;
  event: string;
  data: string;
}

/** Parses complete events out of `buffer`; returns them and what is left over. */
export function parseSse(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    const event: SseEvent = { event: "message", data: "" };
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") event.id = value;
      else if (field === "event") event.event = value;
      else if (field === "data") data.push(value);
    }
    event.data = data.join("\n");
    if (data.length || event.id) events.push(event);
  }
  return { events, rest };
}

export interface EventStreamOptions {
  url: string;
  logger: Logger;
  /** Where to resume (the last handled event's id). */
  lastEventId?: string | undefined;
  /** Handles one event; a rejection is logged and the stream goes on. */
  onEvent(event: SseEvent): Promise<void>;
  /** Told of each connect and disconnect (adapter status). Must not throw. */
  onState(state: "running" | "reconnecting"): void;
  /** @defaultValue 1000 */
  reconnectBaseMs?: number | undefined;
}

/** A running event stream; `stop()` ends it. */
export class SignalEventStream {
  private readonly abort = new AbortController();
  private lastEventId: string | undefined;
  private done: Promise<void> | undefined;
  private connected: (() => void) | undefined;

  constructor(private readonly options: EventStreamOptions) {
    this.lastEventId = options.lastEventId;
  }

  /** Starts; resolves once the first connection is open (or rejects with its failure). */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.connected = resolve;
      this.done = this.loop(reject);
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }

  private async loop(failFirst: (err: unknown) => void): Promise<void> {
    const base = this.options.reconnectBaseMs ?? 1000;
    let delay = base;
    let first = true;
    while (!this.abort.signal.aborted) {
      try {
        const headers: Record<string, string> = { accept: "text/event-stream" };
        if (this.lastEventId) headers["last-event-id"] = this.lastEventId;
        const res = await fetch(this.options.url, { headers, signal: this.abort.signal });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        this.options.onState("running");
        if (first) this.connected?.();
        first = false;
        delay = base;
        await this.read(res.body);
        if (!this.abort.signal.aborted)
          this.options.logger.warn({}, "signal event stream ended; reconnecting");
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (first) {
          failFirst(err);
          return;
        }
        this.options.logger.warn(
          { error: describeError(err), retryInMs: delay },
          "signal event stream failed",
        );
      }
      if (this.abort.signal.aborted) return;
      this.options.onState("reconnecting");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.abort.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      delay = Math.min(delay * 2, 30_000);
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      const { events, rest } = parseSse(buffer);
      buffer = rest;
      for (const event of events) {
        try {
          await this.options.onEvent(event);
          if (event.id) this.lastEventId = event.id;
        } catch (err) {
          this.options.logger.error({ error: describeError(err), eventId: event.id }, "signal event failed");
        }
      }
    }
  }
}
