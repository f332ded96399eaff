/**
 * Contracts of the terminal chat: one conversation (`ChatBackend`), run in this process (the
 * terminal as a platform adapter of an embedded gateway) or on a running gateway through its API
 * server, and the screens on it (the full-screen UI, the line mode).
 */
import type { CommandMenuEntry, OutboundButton } from "../../core/types.js";
import type { ChatHistoryEntry, ChatSessionSummary, ChatStatus } from "../shared/chat-port.js";

/**
 * What the conversation tells its screen. `id` is the id `submit` returned for the message a turn
 * answers; a reply nobody asked for here (a notice, a delivery left from an earlier run) has none.
 */
export type ChatEvent =
  | { type: "delta"; id: string; text: string }
  /** A tool call starting (`callId` set) or a running tool's own status line (none). */
  | { type: "tool"; id: string; line: string; callId?: string | undefined }
  | {
      type: "tool-end";
      id: string;
      callId: string;
      ok: boolean;
      durationMs: number;
      /** The start of the call's output. */
      result?: string | undefined;
    }
  /**
   * A message for the chat. `reply` and `error` end the turn that `id` names; a `notice` does not.
   * `buttons`: choices to offer (an approval, a question), whose `data` is sent back when picked.
   */
  | {
      type: "reply";
      id: string | undefined;
      kind: "reply" | "notice" | "error";
      text: string;
      buttons?: OutboundButton[][] | undefined;
    }
  /** The turn ended without a reply: stopped (`/stop`), or interrupted by a newer message. */
  | { type: "ended"; id: string; status: "cancelled" | "failed" };

/** How to send one message. */
export interface SubmitOptions {
  /** Stream the reply's text as `delta` events. @defaultValue false */
  stream?: boolean | undefined;
  /** The text is a picked button's `data` (the prompt then settles as clicked). @defaultValue false */
  viaButton?: boolean | undefined;
}

/** What a screen reads about its chat besides the messages (the chat port, for this one chat). */
export interface ChatInfo {
  /** Commands for `/` completion; empty when they cannot be read. */
  commands(): Promise<CommandMenuEntry[]>;
  /** The status line's figures; undefined when they cannot be read. */
  status(): Promise<ChatStatus | undefined>;
  /** The chat's sessions, for `/resume`; empty when they cannot be read. */
  sessions(): Promise<ChatSessionSummary[]>;
  /** The active session's last `limit` entries; empty when none (or they cannot be read). */
  history(limit: number): Promise<ChatHistoryEntry[]>;
}

/** One conversation with Herald. */
export interface ChatBackend {
  /** Where its turns run: `embedded`, or the gateway's URL. */
  readonly where: string;
  /** The chat's name as the status line shows it (`cli:alice`, `api:cli-alice`). */
  readonly chatName: string;
  readonly info: ChatInfo;
  /**
   * Sends one message and returns the id its events carry. Never rejects: a message that could not
   * be sent comes back as an `error` reply.
   */
  submit(text: string, options?: SubmitOptions): string;
  /** Listens to events; returns the unsubscribe. A listener must not throw. */
  onEvent(listener: (event: ChatEvent) => void): () => void;
}
