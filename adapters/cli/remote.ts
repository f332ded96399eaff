/**
 * The conversation on a running gateway (`herald chat --url`): each message is one streamed
 * `POST /v1/chat/completions` with `X-Herald-Session-Id` naming the chat and Herald's events asked for
 * (tool progress, buttons); the status line, commands, sessions and history come from `/v1/herald/*`.
 * Works through SSH tunnels and proxies: plain HTTP, JSON bodies, the key as a bearer token.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { z } from "zod";
import type { OutboundButton } from "../../core/types.js";
import {
  chatStatusSchema,
  commandsBodySchema,
  heraldEventSchemas,
  historyBodySchema,
  sessionsBodySchema,
} from "../shared/chat-port.js";
import type { ChatBackend, ChatEvent, ChatInfo, SubmitOptions } from "./types.js";

export interface RemoteChatOptions {
  /** The API server's base URL, e.g. `http://127.0.0.1:8642`. */
  url: string;
  /** `API_SERVER_KEY` of that gateway, when it has one. */
  key?: string | undefined;
  /** The chat (`X-Herald-Session-Id`): one per terminal user by default, so `/sessions` lists its sessions. */
  chatId: string;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** Why the gateway cannot be used, in words that say what to do; undefined when it answers. */
export async function remoteProblem(options: RemoteChatOptions): Promise<string | undefined> {
  const base = options.url.replace(/\/+$/, "");
  try {
    const res = await (options.fetch ?? fetch)(`${base}/v1/models`, { headers: headersOf(options) });
    if (res.status === 401)
      return `The gateway at ${base} wants its API_SERVER_KEY${options.key ? " and refused the one set here" : ""}: set API_SERVER_KEY to the gateway's key.`;
    if (!res.ok) return `The gateway at ${base} answered ${res.status}: ${await errorText(res)}`;
    return undefined;
  } catch (err) {
    return `Nothing answers at ${base} (${causeOf(err)}): start it with \`herald gateway\` (its API server on), or leave out --url to chat here without one.`;
  }
}

/** The conversation over the API server. */
export class RemoteChat implements ChatBackend {
  readonly where: string;
  readonly chatName: string;
  readonly info: ChatInfo;
  private readonly base: string;
  private readonly fetch: typeof fetch;
  private readonly listeners = new Set<(event: ChatEvent) => void>();
  private counter = 0;

  constructor(private readonly options: RemoteChatOptions) {
    this.base = options.url.replace(/\/+$/, "");
    this.where = this.base;
    this.chatName = `api:${options.chatId}`;
    this.fetch = options.fetch ?? fetch;
    this.info = {
      commands: async () => (await this.read("commands", commandsBodySchema))?.commands ?? [],
      status: async () => this.read("status", chatStatusSchema),
      sessions: async () => (await this.read("sessions", sessionsBodySchema))?.sessions ?? [],
      history: async (limit) =>
        (await this.read(`history?limit=${limit}`, historyBodySchema))?.messages ?? [],
    };
  }

  submit(text: string, _options: SubmitOptions = {}): string {
    const id = `r${Date.now()}-${++this.counter}`;
    void this.exchange(id, text).catch((err: unknown) =>
      this.emit({
        type: "reply",
        id,
        kind: "error",
        text: `The gateway at ${this.base} is gone (${causeOf(err)}).`,
      }),
    );
    return id;
  }

  onEvent(listener: (event: ChatEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One message and its streamed answer. */
  private async exchange(id: string, text: string): Promise<void> {
    const res = await this.fetch(`${this.base}/v1/chat/completions`, {
      method: "POST",
      headers: { ...headersOf(this.options), "content-type": "application/json" },
      body: JSON.stringify({
        model: "herald",
        stream: true,
        herald_events: true,
        messages: [{ role: "user", content: text }],
      }),
    });
    if (!res.ok || !res.body) {
      const body = await errorBody(res);
      if (body.type === "cancelled") return this.emit({ type: "ended", id, status: "cancelled" });
      return this.emit({ type: "reply", id, kind: "error", text: body.message });
    }
    let reply = "";
    let buttons: OutboundButton[][] | undefined;
    let finished = false;
    const parser = createParser({
      onEvent: (event: EventSourceMessage) => {
        if (finished) return;
        if (event.event) return this.heraldEvent(id, event, (b) => (buttons = b));
        if (event.data === "[DONE]") {
          finished = true;
          return this.emit({
            type: "reply",
            id,
            kind: "reply",
            text: reply,
            ...(buttons ? { buttons } : {}),
          });
        }
        const chunk = parseJson(event.data) as ChunkShape | undefined;
        if (chunk?.error) {
          finished = true;
          if (chunk.error.type === "cancelled") return this.emit({ type: "ended", id, status: "cancelled" });
          return this.emit({
            type: "reply",
            id,
            kind: "error",
            text: chunk.error.message ?? "The turn failed.",
          });
        }
        const delta = chunk?.choices?.[0]?.delta?.content;
        if (delta) {
          reply += delta;
          this.emit({ type: "delta", id, text: delta });
        }
      },
    });
    const decoder = new TextDecoder();
    for await (const part of res.body) parser.feed(decoder.decode(part as Uint8Array, { stream: true }));
    if (!finished)
      this.emit({ type: "reply", id, kind: "error", text: "The gateway closed the answer early." });
  }

  private heraldEvent(id: string, event: EventSourceMessage, setButtons: (b: OutboundButton[][]) => void) {
    const data = parseJson(event.data);
    if (event.event === "herald.tool") {
      const tool = heraldEventSchemas["herald.tool"].safeParse(data);
      if (tool.success) this.emit({ type: "tool", id, line: tool.data.line, callId: tool.data.callId });
    } else if (event.event === "herald.tool_end") {
      const end = heraldEventSchemas["herald.tool_end"].safeParse(data);
      if (end.success) this.emit({ type: "tool-end", id, ...end.data });
    } else if (event.event === "herald.buttons") {
      const buttons = heraldEventSchemas["herald.buttons"].safeParse(data);
      if (buttons.success) setButtons(buttons.data.buttons);
    }
  }

  /** GET `/v1/herald/<path>`, checked against `schema`; undefined when it fails either way. */
  private async read<S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S> | undefined> {
    try {
      const res = await this.fetch(`${this.base}/v1/herald/${path}`, {
        headers: { ...headersOf(this.options), "x-herald-session-id": this.options.chatId },
      });
      if (!res.ok) return undefined;
      const parsed = schema.safeParse(await res.json());
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  private emit(event: ChatEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** Builds the conversation over the API server at `options.url`. */
export function createRemoteChat(options: RemoteChatOptions): RemoteChat {
  return new RemoteChat(options);
}

interface ChunkShape {
  choices?: { delta?: { content?: string } }[];
  error?: { message?: string; type?: string };
}

function headersOf(options: RemoteChatOptions): Record<string, string> {
  return {
    "x-herald-session-id": options.chatId,
    ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An OpenAI-style error body's message and type (or the status when there is none). */
async function errorBody(res: Response): Promise<{ message: string; type?: string | undefined }> {
  const text = await res.text().catch(() => "");
  const body = parseJson(text) as ChunkShape | undefined;
  return {
    message:
      body?.error?.message ?? `The gateway answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}.`,
    type: body?.error?.type,
  };
}

async function errorText(res: Response): Promise<string> {
  return (await errorBody(res)).message;
}

/** The innermost cause of a failed fetch (`ECONNREFUSED`), or its message. */
function causeOf(err: unknown): string {
  let e = err as { cause?: unknown; code?: string; message?: string } | undefined;
  while (e?.cause) e = e.cause as typeof e;
  return e?.code ?? e?.message ?? String(err);
}
