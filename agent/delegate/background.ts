/**
 * `/background <prompt>`, `/tasks`, `/stop <id>`: a turn in its own background session (a fresh
 * session per task, so the chat's own session stays free), whose reply reaches the chat through the
 * outbox once, like any turn's (a gateway restart runs it again or delivers what is pending). The chat's
 * tasks are kept in the key-value namespace `background` by the chat's session key.
 */
import { createHash } from "node:crypto";
import type { CommandModule } from "../../core/commands.js";
import { attribute, chooseLabel, isSharedGroup } from "../../core/speakers.js";
import type { TurnControl, TurnRecord } from "../../core/turn.js";
import type { GroupSessionMode, KeyValueStore, SessionKeyParts } from "../../core/types.js";

/** A background task as the chat's list keeps it. */
export interface BackgroundTask {
  id: string;
  turnId: string;
  sessionKey: string;
  prompt: string;
  createdAt: number;
}

/** What the background commands work with. */
export interface BackgroundOptions {
  control: TurnControl;
  /** Opens the task's own session (a fresh one), returning its id and key. */
  openSession: (parts: SessionKeyParts, now: number) => { id: string; key: string };
  /** A turn by id (its status for /tasks). */
  turn: (turnId: string) => TurnRecord | undefined;
  /** Namespace `background`. */
  kv: KeyValueStore;
  /** Tasks a chat's list keeps (the oldest are forgotten). @defaultValue 20 */
  keep?: number;
  /**
   * How group sessions are keyed: in `shared` mode a group's task prompt carries its sender's tag, like
   * every person's message there (`core/speakers.ts`). @defaultValue "per_user"
   */
  groupSessions?: GroupSessionMode | undefined;
}

const STATE_ICON: Record<TurnRecord["status"], string> = {
  pending: "💤 waiting",
  running: "⏳ running",
  done: "✅ done",
  failed: "❌ failed",
  cancelled: "⏹ cancelled",
};

/** The chat's background tasks, oldest first. */
export function backgroundTasks(kv: KeyValueStore, sessionKey: string): BackgroundTask[] {
  const raw = kv.get(sessionKey);
  return raw ? (JSON.parse(raw) as BackgroundTask[]) : [];
}

/** Builds the commands. `stopTask` answers `/stop <id>` (wired into the core /stop). */
export function backgroundCommands(options: BackgroundOptions): {
  module: CommandModule;
  stopTask: (id: string, sessionKey: string) => string | undefined;
} {
  const { control, kv } = options;
  const keep = options.keep ?? 20;
  const stopTask = (id: string, sessionKey: string): string | undefined => {
    const task = backgroundTasks(kv, sessionKey).find((t) => t.id === id.trim().toLowerCase());
    if (!task) return undefined;
    const stopped = control.cancel(task.sessionKey, "stopped by the user");
    return stopped ? `⏹ Stopped background task ${task.id}.` : `Background task ${task.id} is not running.`;
  };
  const module: CommandModule = {
    commands: {
      background: {
        description: "run a prompt in the background; the answer comes here when it is done",
        run: ({ args, message, sessionKey, now }) => {
          const prompt = args.trim();
          if (!prompt)
            return "Usage: /background <what to do>. The answer comes to this chat when it is done.";
          // Deterministic: a redelivered message finds its task instead of starting a second.
          const hash = createHash("sha256")
            .update(`${message.platform}\n${message.chat.chatId}\n${message.messageId}`)
            .digest("hex");
          const id = `bg${hash.slice(0, 6)}`;
          const tasks = backgroundTasks(kv, sessionKey);
          if (tasks.some((t) => t.id === id)) return `Background task ${id} is already on its way.`;
          const session = options.openSession(
            {
              chat: { ...message.chat, threadId: `${message.chat.threadId ?? ""}bg-${id}` },
              chatType: message.chatType,
              userId: message.sender.id,
            },
            now,
          );
          const turnId = `b${hash.slice(0, 24)}`;
          // The task's session is new and its own: the sender's label there is their name, as first speaker.
          const { sender } = message;
          const tagged = isSharedGroup(message.chatType, options.groupSessions ?? "per_user")
            ? attribute(prompt, chooseLabel(sender.name, message.platform, sender.id, new Set()))
            : prompt;
          control.submit({
            id: turnId,
            sessionId: session.id,
            sessionKey: session.key,
            chat: message.chat,
            userId: message.sender.id,
            source: "chat",
            input: tagged,
            options: { replyPrefix: `🔙 Background task ${id}:\n` },
          });
          const task = { id, turnId, sessionKey: session.key, prompt: prompt.slice(0, 200), createdAt: now };
          kv.set(sessionKey, JSON.stringify([...tasks, task].slice(-keep)));
          return `🕓 Background task ${id} started. I'll post the answer here; /tasks lists tasks, /stop ${id} stops it.`;
        },
      },
      tasks: {
        description: "list this chat's background tasks",
        run: ({ sessionKey }) => {
          const tasks = backgroundTasks(kv, sessionKey);
          if (!tasks.length) return "No background tasks. Start one with /background <what to do>.";
          return tasks
            .map((t) => {
              const status = options.turn(t.turnId)?.status;
              return `${t.id} ${status ? STATE_ICON[status] : "❔ unknown"}: ${t.prompt}`;
            })
            .join("\n");
        },
      },
    },
  };
  return { module, stopTask };
}
