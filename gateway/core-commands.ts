/**
 * The gateway's own slash commands: /new (/reset), /stop, /status, /help, /start. They run inside the
 * inbound transaction, bypass a busy session, and reach turns only through the `TurnControl` port.
 */
import type { CommandModule } from "../core/commands.js";
import type { TurnControl } from "../core/turn.js";
import type { SessionStore } from "../sessions/types.js";
import type { CommandRegistry } from "./commands.js";

export interface CoreCommandsOptions {
  control: TurnControl;
  sessions: Pick<SessionStore, "list">;
  /** For /help. */
  commands: Pick<CommandRegistry, "helpText">;
  /** The model /status names: one name, or the session key's own (its `/model` choice). */
  modelName?: string | ((sessionKey: string) => string) | undefined;
  /** What else /stop stops in a session (a pending approval); returns how many things it stopped. */
  onStop?: ((sessionKey: string) => number) | undefined;
  /** Answers `/stop <id>` (a background task); undefined when no task has that id. */
  onStopTask?: ((id: string, sessionKey: string) => string | undefined) | undefined;
  /** More lines for /status (loaded plugins). */
  statusLines?: (() => string[]) | undefined;
}

/** The core commands. */
export function coreCommands(options: CoreCommandsOptions): CommandModule {
  const { control } = options;
  const newSession = {
    description: "start a new session (the old one stays searchable)",
    run: ({ sessionKey }: { sessionKey: string }) => {
      control.reset(sessionKey);
      return "✨ New session started. What's next?";
    },
  };
  return {
    commands: {
      new: newSession,
      reset: { ...newSession, hidden: true },
      stop: {
        description: "stop what I'm working on (/stop <id>: one background task)",
        run: ({ sessionKey, args }) => {
          if (args) {
            const answer = options.onStopTask?.(args, sessionKey);
            if (answer !== undefined) return answer;
          }
          const stopped =
            control.cancel(sessionKey, "stopped by the user", { keepInput: true }) +
            (options.onStop?.(sessionKey) ?? 0);
          return stopped ? "⏹ Stopped." : "Nothing is running.";
        },
      },
      status: {
        description: "show this session and what's running",
        run: ({ sessionKey, message }) => {
          const open = control.openTurns(sessionKey);
          const running = open.filter((t) => t.status === "running").length;
          const session = options.sessions
            .list({ keyPrefix: sessionKey, activeOnly: true, limit: 5 })
            .find((s) => s.key === sessionKey);
          return [
            `Session: ${session ? `${session.id} (${session.messageCount} messages, since ${new Date(session.createdAt).toISOString()})` : "none yet"}`,
            `Model: ${(typeof options.modelName === "function" ? options.modelName(sessionKey) : options.modelName) ?? "default"}`,
            `Running: ${running ? "yes" : "no"}${open.length > running ? `, ${open.length - running} waiting` : ""}`,
            `Platform: ${message.platform}`,
            ...(options.statusLines?.() ?? []),
          ].join("\n");
        },
      },
      help: {
        description: "list the commands you can run here",
        run: ({ isOwner }) => options.commands.helpText({ isOwner }),
      },
      start: {
        description: "greeting",
        hidden: true,
        run: () => "Hi! I'm Herald, your assistant. Just write to me. /help lists commands.",
      },
    },
  };
}
