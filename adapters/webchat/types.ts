/**
 * The web chat's contracts: what it needs of the gateway beyond every adapter's dependencies (the
 * `webchat` member of `AdapterServices`, which the composition root fills), and the events its pages read.
 */
import type { ChatRef, CommandMenuEntry } from "../../core/types.js";
import type { ChatPort, ChatSessionSummary } from "../shared/chat-port.js";

/** One line of a session's history as the page shows it, with what groups it into turns. */
export interface WebHistoryEntry {
  seq: number;
  role: "user" | "assistant" | "tool";
  text: string;
  /** The turn that wrote it (absent for messages of older builds and summaries). */
  turnId?: string | undefined;
}

/** A page of the active session's history, newest last. */
export interface WebHistoryPage {
  sessionId?: string | undefined;
  title?: string | undefined;
  entries: WebHistoryEntry[];
  /** Older entries exist before the first one. */
  more: boolean;
}

/** One search hit in the user's own sessions. */
export interface WebSearchHit {
  sessionId: string;
  snippet: string;
  createdAt: number;
  /** Its number in `/sessions` (what `/resume` takes), when it is among the listed ones. */
  n?: number | undefined;
}

/** What the web chat needs of the gateway. Implementations must not throw for an unknown chat. */
export interface WebChatServices {
  /** What logs the owner in (DASHBOARD_PASSWORD, API_SERVER_KEY); empty: no login, loopback only. */
  secrets: readonly string[];
  /** The server listens on loopback only (the login-less mode is allowed). */
  loopbackServer: boolean;
  /** Voice notes are transcribed (`voice.stt`): the page offers to record one. */
  voiceNotes: boolean;
  /** Commands, sessions and status, as the terminal reads them. */
  chat: Pick<ChatPort, "sessions" | "status">;
  /** The commands `userId` may run (an owner's include the owners-only ones). */
  commands(userId: string): CommandMenuEntry[];
  /** Whether `userId` of the web chat is an owner. */
  isOwner(userId: string): boolean;
  /** Admits an invited user: the pairing store's approval, as `herald pairing approve` gives it. */
  admit(userId: string): void;
  /** The entries of the chat's active session before `beforeSeq` (all: the newest), at most `limit`. */
  history(chat: ChatRef, options: { beforeSeq?: number | undefined; limit: number }): WebHistoryPage;
  /** The id of the chat's active session (none before its first message, or after `/new`). */
  activeSession(chat: ChatRef): string | undefined;
  /** Full-text search (FTS5) over the chat's own sessions. */
  search(chat: ChatRef, query: string, limit: number): WebSearchHit[];
  /** The turn id of the web chat's inbound message `messageId` (how history entries name their turn). */
  turnIdOf(messageId: string): string;
}

declare module "../../core/types.js" {
  interface AdapterServices {
    /** The web chat's. */
    webchat?: WebChatServices | undefined;
  }
}

export type { ChatSessionSummary };

/** A file the page offers for download (the agent sent it, or the user uploaded it). */
export interface WebFile {
  name: string;
  url: string;
  mimeType?: string | undefined;
  /** Shown inline (an image) rather than as a link. */
  inline?: boolean | undefined;
  /** Played in place (a spoken reply, a voice note), with a link beside. */
  audio?: boolean | undefined;
}

/** What the live stream carries, by its SSE event name. */
export interface WebEventData {
  /** A user's message, as recorded (every tab of the chat shows it). */
  user: { turnId: string; replyToId: string; text: string; files?: WebFile[] | undefined };
  delta: { turnId: string; text: string };
  tool: { turnId: string; line: string; callId?: string | undefined };
  tool_end: { turnId: string; callId: string; ok: boolean; durationMs: number };
  /** A reply, notice or error; `id` is what `settle` names. */
  message: {
    id: string;
    turnId?: string | undefined;
    kind: "reply" | "notice" | "error";
    text: string;
    buttons?: { label: string; data: string }[][] | undefined;
    files?: WebFile[] | undefined;
  };
  /** A prompt's buttons answered another way: its text replaced, the buttons gone. */
  settle: { id: string; text: string };
  ended: { turnId: string; status: "ok" | "cancelled" | "failed" };
  /** A command ran: the page reads the sessions again, and the history when the active one changed. */
  session: { changed: boolean };
}

export type WebEventType = keyof WebEventData;
