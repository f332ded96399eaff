/**
 * Commands on the chat's session: /retry, /undo, /compress, /title, /sessions, /resume and /whoami.
 * They run inside the inbound transaction like every command, answer from state at once, and never
 * wait for a running turn: where one runs, /retry, /undo, /compress and /resume refuse ("/stop
 * first") rather than change the history under it.
 */
import type { Command, CommandContext, CommandModule, CommandResult } from "../core/commands.js";
import type { HistoryItem, TurnControl } from "../core/turn.js";
import type { Session, SessionStore, StoredMessage } from "../sessions/types.js";
import type { EndedSession } from "./types.js";

/**
 * What /compress did: compressed (estimated tokens of the history before and after, messages the
 * summary replaced), nothing because the session is `short`, or nothing because the session `changed`
 * while the summary was written (an /undo, a turn that compacted it).
 */
export type CompressReport =
  | { kind: "compressed"; beforeTokens: number; afterTokens: number; replaced: number }
  | { kind: "short" }
  | { kind: "changed" };

/**
 * Compacts a session now (the composition root's compressor: a model call) from `history`, the view
 * the command saw. May reject (the user is told it failed).
 */
export type CompressSession = (session: Session, history: HistoryItem[]) => Promise<CompressReport>;

export interface SessionCommandsOptions {
  control: Pick<TurnControl, "openTurns">;
  sessions: Pick<SessionStore, "list" | "load" | "truncate" | "setTitle" | "resume">;
  /** Tells that /resume replaced a session (the runner's `session-ended` event; runs after commit). */
  sessionEnded?: ((ended: EndedSession) => void) | undefined;
  /** /compress's compressor; without one /compress says it is unavailable. */
  compress?: CompressSession | undefined;
  now?: () => number;
}

/** Sessions /sessions lists (and /resume numbers). */
const LISTED = 10;
/** A /title is cut to this many characters. */
const TITLE_MAX_CHARS = 80;
const BUSY = "A turn is running; /stop it first, then try again.";

/** The session commands. */
export function sessionCommands(options: SessionCommandsOptions): CommandModule {
  const { sessions, control } = options;
  const now = options.now ?? Date.now;
  const busy = (key: string) => control.openTurns(key).length > 0;
  /** This chat's sessions (exactly this key), newest activity first. */
  const ofKey = (key: string, limit = LISTED): Session[] =>
    sessions
      .list({ keyPrefix: key, limit: 500 })
      .filter((s) => s.key === key)
      .slice(0, limit);
  const active = (key: string) => ofKey(key).find((s) => s.endedAt === undefined);
  /** The seq of the last user message in the session's loaded view, with the view. */
  const lastExchange = (session: Session): { from: StoredMessage; removed: StoredMessage[] } | undefined => {
    const view = sessions.load(session.id);
    const at = view.findLastIndex((m) => m.message.role === "user");
    return at < 0 ? undefined : { from: view[at]!, removed: view.slice(at) };
  };

  const retry: Command = {
    description: "answer your last message again (the last answer is dropped)",
    run: ({ sessionKey }): CommandResult => {
      if (busy(sessionKey)) return BUSY;
      const session = active(sessionKey);
      const last = session && lastExchange(session);
      if (!session || !last) return "Nothing to retry yet.";
      sessions.truncate(session.id, last.from.seq);
      return { turnInput: String(last.from.message.content ?? ""), replay: true };
    },
  };

  const undo: Command = {
    description: "drop your last message and my answer from this session",
    run: ({ sessionKey }) => {
      if (busy(sessionKey)) return BUSY;
      const session = active(sessionKey);
      const last = session && lastExchange(session);
      if (!session || !last) return "Nothing to undo.";
      sessions.truncate(session.id, last.from.seq);
      const after = last.removed.length - 1;
      return `↩️ Removed your message “${preview(String(last.from.message.content ?? ""))}”${
        after ? ` and ${after} message${after === 1 ? "" : "s"} after it` : ""
      }. I won't see them any more.`;
    },
  };

  const compress: Command = {
    description: "summarise this session's history now to free context (shows tokens before and after)",
    run: ({ sessionKey }): CommandResult => {
      const compressor = options.compress;
      if (!compressor) return "Compression is not available here.";
      if (busy(sessionKey)) return BUSY;
      const session = active(sessionKey);
      if (!session) return "Nothing to compress yet.";
      const history = sessions.load(session.id).map((m) => ({ seq: m.seq, message: m.message }));
      return {
        notice: "🗜 Compressing this session…",
        answer: async () => {
          const report = await compressor(session, history);
          if (report.kind === "short") return "Nothing to compress: the session is already short.";
          if (report.kind === "changed")
            return "The session changed while I was summarising it, so nothing was compressed. Try /compress again.";
          return `🗜 Compressed ${report.replaced} messages into a summary: ~${report.beforeTokens} → ~${report.afterTokens} tokens of history.`;
        },
      };
    },
  };

  const title: Command = {
    description: "name this session (/title <text>); shown in /sessions",
    run: ({ sessionKey, args }) => {
      const session = active(sessionKey);
      if (!session) return "No session yet: write something first, then name it.";
      const text = args.replace(/\s+/g, " ").trim().slice(0, TITLE_MAX_CHARS);
      if (!text) return `Title: ${session.title ?? "(none)"}. Set one with /title <text>.`;
      sessions.setTitle(session.id, text);
      return `🏷 Session titled “${text}”.`;
    },
  };

  const list: Command = {
    description: "list this chat's sessions (then /resume <n>)",
    run: ({ sessionKey }) => {
      const all = ofKey(sessionKey);
      if (all.length === 0) return "No sessions in this chat yet.";
      const lines = all.map(
        (s, i) =>
          `${i + 1}. ${s.title ? preview(s.title, 50) : "(untitled)"} — ${dateOf(s.lastActiveAt)} — ${s.messageCount} message${s.messageCount === 1 ? "" : "s"}${s.endedAt === undefined ? " (current)" : ""}`,
      );
      return ["Sessions in this chat:", ...lines, "", "/resume <n> reopens one."].join("\n");
    },
  };

  const resume: Command = {
    description: "reopen one of this chat's sessions (/resume <n> from /sessions)",
    run: ({ sessionKey, args }): CommandResult => {
      const n = Number(args.trim());
      const all = ofKey(sessionKey);
      if (!Number.isInteger(n) || n < 1 || n > all.length)
        return all.length
          ? `Say which: /resume <n> with n from 1 to ${all.length} (see /sessions).`
          : "No sessions in this chat yet.";
      const target = all[n - 1]!;
      if (target.endedAt === undefined) return "That is already the current session.";
      if (busy(sessionKey)) return BUSY;
      const resumed = sessions.resume(target.id, now());
      if (!resumed) return "That session is gone.";
      const { replaced } = resumed;
      const name = target.title ? `“${preview(target.title, 50)}”` : `from ${dateOf(target.lastActiveAt)}`;
      return {
        reply: `📂 Resumed session ${name} (${target.messageCount} messages). We continue from there.`,
        after: () => {
          if (replaced) options.sessionEnded?.({ id: replaced.id, key: sessionKey, reason: "manual" });
        },
      };
    },
  };

  const whoami: Command = {
    description: "show who you are to me here: platform, user id, access, chat, session",
    run: (ctx: CommandContext) => {
      const { message, sessionKey, isOwner } = ctx;
      const session = active(sessionKey);
      const chat = message.chat.threadId
        ? `${message.chat.chatId} (thread ${message.chat.threadId})`
        : message.chat.chatId;
      return [
        `Platform: ${message.platform}`,
        `User: ${message.sender.id}${message.sender.name ? ` (${message.sender.name})` : ""}`,
        `Access: ${isOwner ? "owner" : "allowed"}`,
        `Chat: ${message.chatType === "dm" ? "direct message" : "group"} ${chat}`,
        `Session: ${session ? session.id : "none yet"}`,
      ].join("\n");
    },
  };

  return {
    commands: { retry, undo, compress, title, sessions: list, resume, whoami },
  };
}

/** The first `max` characters of `text` on one line. */
function preview(text: string, max = 60): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** "2026-11-24 13:50 UTC". */
function dateOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
