/**
 * One chat's live stream: the events every open page of that chat reads over SSE, numbered from one
 * process-wide sequence, kept in a bounded log so a page that reconnects (`Last-Event-ID`) gets what it
 * missed, once; and what a page opened now needs besides the committed history: the turns still being
 * written (the user's text, the reply so far, the tool lines) and the prompts whose buttons are not
 * answered yet. The history and this state are read in the same synchronous step, and the page then
 * asks for the events after that step's number, so nothing is shown twice or lost.
 */
import type { ServerResponse } from "node:http";
import type { WebEventData, WebEventType } from "./types.js";

/** Events a chat keeps for reconnecting pages. */
const MAX_EVENTS = 2_000;
/** Prompts with buttons a chat keeps unanswered (older ones lose their buttons on a reload). */
const MAX_PROMPTS = 20;

interface LoggedEvent {
  seq: number;
  text: string;
}

/** A turn being written, as a page opened mid-turn shows it. */
export interface RunningTurn {
  turnId: string;
  replyToId: string;
  user: WebEventData["user"];
  text: string;
  tools: { line: string; callId?: string | undefined; ok?: boolean | undefined }[];
}

/** The process-wide event numbering; `boot` changes with every start, so old ids are recognised. */
export class EventClock {
  readonly boot = Date.now().toString(36);
  #seq = 0;
  next(): number {
    this.#seq += 1;
    return this.#seq;
  }
  get now(): number {
    return this.#seq;
  }
}

/** One chat's events, pages and unfinished state. */
export class ChatChannel {
  readonly #log: LoggedEvent[] = [];
  /** The newest sequence number dropped from the log (a page that needs older ones starts afresh). */
  #droppedUpTo = 0;
  readonly #streams = new Set<ServerResponse>();
  readonly running = new Map<string, RunningTurn>();
  readonly prompts = new Map<string, WebEventData["message"]>();

  constructor(private readonly clock: EventClock) {}

  /** Records and sends one event to every open page of the chat. */
  emit<T extends WebEventType>(type: T, data: WebEventData[T]): void {
    this.#track(type, data);
    const seq = this.clock.next();
    const text = `id: ${this.clock.boot}.${seq}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    this.#log.push({ seq, text });
    if (this.#log.length > MAX_EVENTS) this.#droppedUpTo = this.#log.shift()!.seq;
    for (const res of this.#streams) res.write(text);
  }

  /**
   * Attaches a page's stream after event `after` (`boot.seq`): what it missed first, then everything
   * new. False when that point is gone (another boot, or older than the log): the page must reload.
   */
  attach(res: ServerResponse, after: string): boolean {
    const [boot, seqText] = after.split(".");
    const seq = Number(seqText);
    if (boot !== this.clock.boot || !Number.isInteger(seq) || seq < this.#droppedUpTo || seq > this.clock.now)
      return false;
    for (const e of this.#log) if (e.seq > seq) res.write(e.text);
    this.#streams.add(res);
    res.on("close", () => this.#streams.delete(res));
    return true;
  }

  /** Ends every open stream (the gateway stops). */
  close(): void {
    for (const res of this.#streams) res.end();
    this.#streams.clear();
  }

  /** Pages open now. */
  get listeners(): number {
    return this.#streams.size;
  }

  #track<T extends WebEventType>(type: T, data: WebEventData[T]): void {
    const d = data as WebEventData[WebEventType];
    if (type === "user") {
      const u = d as WebEventData["user"];
      this.running.set(u.turnId, { turnId: u.turnId, replyToId: u.replyToId, user: u, text: "", tools: [] });
      return;
    }
    if (type === "delta" || type === "tool" || type === "tool_end") {
      const turn = this.running.get((d as { turnId: string }).turnId);
      if (!turn) return;
      if (type === "delta") turn.text += (d as WebEventData["delta"]).text;
      else if (type === "tool") {
        const t = d as WebEventData["tool"];
        turn.tools.push({ line: t.line, callId: t.callId });
      } else {
        const t = d as WebEventData["tool_end"];
        const line = turn.tools.find((x) => x.callId === t.callId);
        if (line) line.ok = t.ok;
      }
      return;
    }
    if (type === "ended") this.running.delete((d as WebEventData["ended"]).turnId);
    else if (type === "message") {
      const m = d as WebEventData["message"];
      if (m.turnId && m.kind !== "notice") this.running.delete(m.turnId);
      if (m.buttons?.length) {
        this.prompts.set(m.id, m);
        while (this.prompts.size > MAX_PROMPTS) this.prompts.delete(this.prompts.keys().next().value!);
      }
    } else if (type === "settle") this.prompts.delete((d as WebEventData["settle"]).id);
  }
}
