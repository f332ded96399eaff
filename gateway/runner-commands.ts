/**
 * The gateway's own slash commands: /new (/reset), /stop, /status, /help, /start. They run inside the
 * inbound transaction and bypass a busy session.
 */
import type { GatewayRunner } from "./runner.js";

/** Registers the core commands on a runner. */
export function registerCoreCommands(runner: GatewayRunner): void {
  const { commands } = runner;

  const newSession = {
    description: "start a new session (the old one stays searchable)",
    run: ({ sessionKey }: { sessionKey: string }) => {
      const effects: (() => void)[] = [];
      runner.cancelTurns(sessionKey, "session reset", effects, false);
      const ended = runner.state.sessions.reset(sessionKey, "manual");
      if (ended) effects.push(() => runner.endedSession({ id: ended.id, key: sessionKey, reason: "manual" }));
      return { reply: "✨ New session started. What's next?", after: () => runAll(effects) };
    },
  };
  commands.register("new", newSession);
  commands.register("reset", { ...newSession, hidden: true });

  commands.register("stop", {
    description: "stop what I'm working on",
    run: ({ sessionKey }) => {
      const effects: (() => void)[] = [];
      const count = runner.cancelTurns(sessionKey, "stopped by the user", effects, true);
      return {
        reply: count ? "⏹ Stopped." : "Nothing is running.",
        after: () => runAll(effects),
      };
    },
  });

  commands.register("status", {
    description: "show this session and what's running",
    run: ({ sessionKey, message }) => {
      const config = runner.config;
      const open = runner.openTurns(sessionKey);
      const running = open.filter((t) => t.status === "running").length;
      const session = runner.state.sessions
        .list({ keyPrefix: sessionKey, activeOnly: true, limit: 5 })
        .find((s) => s.key === sessionKey);
      const lines = [
        `Session: ${session ? `${session.id} (${session.messageCount} messages, since ${new Date(session.createdAt).toISOString()})` : "none yet"}`,
        `Model: ${config.model.name}`,
        `Running: ${running ? "yes" : "no"}${open.length > running ? `, ${open.length - running} waiting` : ""}`,
        `Platform: ${message.platform}`,
      ];
      return lines.join("\n");
    },
  });

  commands.register("help", {
    description: "list commands",
    run: () => runner.commands.helpText(),
  });

  commands.register("start", {
    description: "greeting",
    hidden: true,
    run: () => "Hi! I'm Herald, your assistant. Just write to me. /help lists commands.",
  });
}

function runAll(effects: (() => void)[]): void {
  for (const effect of effects) effect();
}
