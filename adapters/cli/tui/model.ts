/**
 * The terminal UI's state: the transcript, the input, the menu, the status line's figures, and what
 * the conversation's events do to them. Changes are announced to the view at most once a frame
 * (33 ms, Ink's own pace), the first at once, so a keystroke is echoed without waiting and a fast
 * stream costs one frame per 33 ms; nothing changes, and nothing is drawn, while nothing happens.
 */
import type { CommandMenuEntry, OutboundButton } from "../../../core/types.js";
import type { ChatSessionSummary, ChatStatus } from "../../shared/chat-port.js";
import type { ChatBackend, ChatEvent } from "../types.js";
import type { Completion } from "./complete.js";
import { Editor } from "./editor.js";
import { attachFiles } from "./files.js";
import type { InputHistory } from "./history.js";
import { type Entry, Transcript } from "./transcript.js";

/** The menu under the input: completions, the sessions `/resume` offers, or a prompt's choices. */
export type Menu =
  | { kind: "complete"; from: number; items: Completion[]; selected: number }
  | { kind: "sessions"; items: ChatSessionSummary[]; selected: number };

type Assistant = Extract<Entry, { kind: "assistant" }>;

export interface ChatModelOptions {
  backend: ChatBackend;
  history: InputHistory;
  /** Where `@path` finds files: the directory `herald chat` started in. */
  root: string;
  columns: number;
  rows: number;
  /** Called once when the user leaves. */
  onExit: () => void;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** What a message sent from here was, for its answer. */
interface Sent {
  /** A command whose answer changes the session shown (`/new`, `/resume <n>`): the transcript reloads. */
  reloads: boolean;
  /** `/stop` from Ctrl+C: its answer is a notice. */
  quiet: boolean;
}

const FRAME_MS = 33;
const SPINNER_MS = 100;
const EXIT_ARMED_MS = 2000;
/** Entries loaded when the UI opens or a session is reopened. */
export const HISTORY_SHOWN = 200;

/** The UI's state and behaviour (the view reads it; keys.ts's keys change it through `input.ts`). */
export class ChatModel {
  readonly transcript = new Transcript();
  readonly editor = new Editor();
  readonly backend: ChatBackend;
  readonly history: InputHistory;
  readonly root: string;
  columns: number;
  rows: number;
  status: ChatStatus | undefined;
  commands: CommandMenuEntry[] = [];
  menu: Menu | undefined;
  /** The selected choice of the open prompt. */
  choice = 0;
  /** Lines scrolled up from the bottom of the transcript. */
  scroll = 0;
  /** Tool calls show the start of their output. */
  expanded = false;
  /** A short note in the status line (Ctrl+C armed, stopping). */
  hint: string | undefined;
  spinnerFrame = 0;
  readonly pending = new Map<string, Sent>();
  private version = 0;
  private readonly listeners = new Set<() => void>();
  private lastNotify = 0;
  private notifyTimer: NodeJS.Timeout | undefined;
  private spinner: NodeJS.Timeout | undefined;
  private hintTimer: NodeJS.Timeout | undefined;
  private exitArmedAt: number | undefined;
  private exited = false;
  private readonly now: () => number;

  constructor(private readonly options: ChatModelOptions) {
    this.backend = options.backend;
    this.history = options.history;
    this.root = options.root;
    this.columns = options.columns;
    this.rows = options.rows;
    this.now = options.now ?? Date.now;
  }

  // --- the view's side --------------------------------------------------------------------------

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly snapshot = (): number => this.version;

  /** Marks the state changed; the view hears of it now (`now`, or a frame after the last), or then. */
  changed(now = false): void {
    this.version++;
    if (this.notifyTimer) return;
    const wait = this.lastNotify + FRAME_MS - performance.now();
    if (now || wait <= 0) {
      this.notify();
      return;
    }
    this.notifyTimer = setTimeout(() => this.notify(), wait);
  }

  private notify(): void {
    clearTimeout(this.notifyTimer);
    this.notifyTimer = undefined;
    this.lastNotify = performance.now();
    for (const listener of this.listeners) listener();
  }

  get busy(): boolean {
    return this.pending.size > 0;
  }

  /** The newest entry's choices while unanswered and nothing was said after it. */
  openPrompt(): (Assistant & { buttons: OutboundButton[][] }) | undefined {
    for (let i = this.transcript.entries.length - 1; i >= 0; i--) {
      const entry = this.transcript.entries[i]!;
      if (entry.kind === "user") return undefined;
      if (entry.kind === "assistant" && entry.buttons?.length)
        return entry.answer === undefined
          ? (entry as Assistant & { buttons: OutboundButton[][] })
          : undefined;
    }
    return undefined;
  }

  // --- start ------------------------------------------------------------------------------------

  /** Loads the session so far, the commands and the status; listens to the conversation. */
  async open(banner: string): Promise<() => void> {
    const unsubscribe = this.backend.onEvent((event) => this.onEvent(event));
    this.push({ kind: "notice", rev: 0, text: banner });
    const [entries, commands] = await Promise.all([
      this.backend.info.history(HISTORY_SHOWN),
      this.backend.info.commands(),
    ]);
    this.commands = commands;
    this.transcript.entries.splice(1, 0, ...historyEntries(entries));
    this.changed();
    this.refreshStatus();
    return unsubscribe;
  }

  refreshStatus(): void {
    void this.backend.info.status().then((status) => {
      this.status = status;
      this.changed();
    });
  }

  // --- what the user does -----------------------------------------------------------------------

  /** Sends what is in the input (or does what the UI itself answers: `/exit`, a bare `/resume`). */
  submit(): void {
    const typed = this.editor.text.trim();
    if (!typed) return;
    this.history.add(this.editor.text);
    this.editor.clear();
    this.menu = undefined;
    this.scroll = 0;
    if (typed === "/exit" || typed === "/quit") {
      this.exit();
      return;
    }
    if (typed === "/resume") {
      void this.openSessions();
      return;
    }
    const prompt = this.openPrompt();
    if (prompt) {
      prompt.answer = typed;
      prompt.rev++;
    }
    const { text, files } = typed.startsWith("/")
      ? { text: typed, files: [] }
      : attachFiles(typed, this.root);
    this.push({ kind: "user", rev: 0, text: typed, ...(files.length ? { files } : {}) });
    this.send(text, { reloads: /^\/(new|reset|resume\s+\d+)\b/.test(typed), quiet: false });
  }

  /** Answers the open prompt with one of its choices. */
  choose(index: number): void {
    const prompt = this.openPrompt();
    const button = prompt?.buttons.flat()[index];
    if (!prompt || !button) return;
    prompt.answer = button.label;
    prompt.rev++;
    this.scroll = 0;
    this.send(button.data, { reloads: false, quiet: false }, true);
  }

  /** `/resume` alone: the chat's sessions to pick from. */
  async openSessions(): Promise<void> {
    const items = await this.backend.info.sessions();
    if (items.length === 0) {
      this.push({ kind: "notice", rev: 0, text: "No sessions in this chat yet." });
      return;
    }
    this.menu = {
      kind: "sessions",
      items,
      selected: Math.max(
        0,
        items.findIndex((s) => !s.current),
      ),
    };
    this.changed();
  }

  /** Reopens session `n` of the list. */
  resume(n: number): void {
    this.menu = undefined;
    this.push({ kind: "user", rev: 0, text: `/resume ${n}` });
    this.send(`/resume ${n}`, { reloads: true, quiet: false });
  }

  /** Ctrl+C: stops the running turn; with nothing running, twice in two seconds leaves. */
  interrupt(): void {
    const armed = this.exitArmedAt !== undefined && this.now() - this.exitArmedAt < EXIT_ARMED_MS;
    if (armed) {
      this.exit();
      return;
    }
    if (this.busy) {
      if (![...this.pending.values()].some((s) => s.quiet))
        this.send("/stop", { reloads: false, quiet: true });
      this.arm("Stopping… (Ctrl+C again to quit)");
      return;
    }
    this.editor.clear();
    this.menu = undefined;
    this.arm("Press Ctrl+C again to quit");
  }

  exit(): void {
    if (this.exited) return;
    this.exited = true;
    clearInterval(this.spinner);
    clearTimeout(this.hintTimer);
    clearTimeout(this.notifyTimer);
    this.options.onExit();
  }

  private arm(hint: string): void {
    this.exitArmedAt = this.now();
    this.hint = hint;
    clearTimeout(this.hintTimer);
    this.hintTimer = setTimeout(() => {
      this.hint = undefined;
      this.exitArmedAt = undefined;
      this.changed();
    }, EXIT_ARMED_MS);
    this.changed(true);
  }

  private send(text: string, sent: Sent, viaButton = false): void {
    const id = this.backend.submit(text, { stream: true, viaButton });
    this.pending.set(id, sent);
    this.startSpinner();
    this.changed(true);
  }

  // --- what the conversation says ---------------------------------------------------------------

  /** Applies one event of the conversation. */
  onEvent(event: ChatEvent): void {
    // Ctrl+C's own /stop says nothing: the stopped reply shows it.
    const quiet = event.id !== undefined && this.pending.get(event.id)?.quiet === true;
    if (quiet && event.type !== "reply" && event.type !== "ended") return;
    switch (event.type) {
      case "delta": {
        const last = this.lastOf(event.id);
        if (last?.kind === "assistant" && last.streaming) {
          last.text += event.text;
          last.rev++;
        } else this.push({ kind: "assistant", rev: 0, id: event.id, text: event.text, streaming: true });
        break;
      }
      case "tool": {
        const last = this.lastOf(event.id);
        if (event.callId === undefined && last?.kind === "tool" && last.callId === undefined) {
          last.line = event.line;
          last.rev++;
        } else {
          this.push({
            kind: "tool",
            rev: 0,
            id: event.id,
            callId: event.callId,
            line: event.line,
            state: "running",
          });
        }
        break;
      }
      case "tool-end": {
        const entry = this.transcript.entries.findLast((e) => e.kind === "tool" && e.callId === event.callId);
        if (entry?.kind === "tool") {
          entry.state = event.ok ? "ok" : "failed";
          entry.durationMs = event.durationMs;
          entry.result = event.result;
          entry.rev++;
        }
        break;
      }
      case "reply":
        this.onReply(event);
        break;
      case "ended": {
        const last = this.lastOf(event.id);
        if (last?.kind === "assistant") {
          last.streaming = false;
          last.stopped = true;
          last.rev++;
        } else this.push({ kind: "notice", rev: 0, text: "⏹ stopped" });
        this.settle(event.id);
        break;
      }
    }
    this.changed();
  }

  private onReply(event: Extract<ChatEvent, { type: "reply" }>): void {
    const sent = event.id === undefined ? undefined : this.pending.get(event.id);
    if (sent?.quiet) {
      this.settle(event.id);
      return;
    }
    if (event.kind === "notice") this.push({ kind: "notice", rev: 0, text: event.text });
    else if (event.kind === "error") this.push({ kind: "error", rev: 0, text: event.text });
    else {
      const last = event.id === undefined ? undefined : this.lastOf(event.id);
      if (last?.kind === "assistant" && last.streaming) {
        last.text = event.text;
        last.streaming = false;
        last.buttons = event.buttons;
        last.rev++;
      } else {
        this.push({
          kind: "assistant",
          rev: 0,
          id: event.id,
          text: event.text,
          streaming: false,
          buttons: event.buttons,
        });
      }
      if (event.buttons?.length) this.choice = 0;
    }
    if (event.kind === "notice") return;
    if (sent?.reloads && event.kind === "reply") void this.reload(event.text);
    this.settle(event.id);
  }

  /** The transcript of the session now active, then `note` (what reopened it). */
  private async reload(note: string): Promise<void> {
    const entries = await this.backend.info.history(HISTORY_SHOWN);
    this.transcript.entries = [...historyEntries(entries), { kind: "notice", rev: 0, text: note }];
    this.scroll = 0;
    this.changed();
  }

  private settle(id: string | undefined): void {
    if (id === undefined || !this.pending.delete(id)) return;
    if (this.pending.size > 0) return;
    clearInterval(this.spinner);
    this.spinner = undefined;
    if (this.hint?.startsWith("Stopping")) this.hint = undefined;
    this.refreshStatus();
  }

  private startSpinner(): void {
    if (this.spinner) return;
    this.spinner = setInterval(() => {
      this.spinnerFrame++;
      this.changed();
    }, SPINNER_MS);
  }

  private lastOf(id: string): Entry | undefined {
    return this.transcript.entries.findLast((e) => "id" in e && e.id === id);
  }

  /** Adds an entry; a reader scrolled up keeps their place. */
  push(entry: Entry): void {
    this.transcript.entries.push(entry);
    this.changed();
  }
}

/** Entries of a stored session's history. */
function historyEntries(entries: readonly { role: string; text: string }[]): Entry[] {
  return entries.map((e): Entry => {
    if (e.role === "user") return { kind: "user", rev: 0, text: e.text };
    if (e.role === "tool") return { kind: "tool", rev: 0, callId: "", line: e.text, state: "past" };
    return { kind: "assistant", rev: 0, text: e.text, streaming: false };
  });
}
