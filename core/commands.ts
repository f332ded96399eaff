/**
 * Slash command contracts. A command is answered by the gateway itself, never by the model, and
 * bypasses a busy session. Features declare their own (`/sethome`, `/skills`) against these types.
 */
import type { TurnResume } from "./turn.js";
import type { InboundMessage, OutboundButton } from "./types.js";

export type { CommandMenuEntry } from "./types.js";

/** A parsed `/name args` at the start of a message. */
export interface ParsedCommand {
  name: string;
  args: string;
}

/**
 * Parses a leading slash command. `/New@herald_bot  x` → `{ name: "new", args: "x" }`.
 * Returns undefined for text that is not a command (including `/` alone and paths like `/etc/hosts`).
 */
export function parseCommand(text: string): ParsedCommand | undefined {
  const m = /^\/([a-zA-Z][\w-]{0,63})(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  return { name: m[1]!.toLowerCase(), args: (m[2] ?? "").trim() };
}

/** What a command handler can see and do. */
export interface CommandContext {
  message: InboundMessage;
  args: string;
  sessionKey: string;
  now: number;
  /** Whether the sender is an owner (the owner policy, `AccessPolicy.isOwner`). @defaultValue false */
  isOwner?: boolean | undefined;
}

/**
 * What a command answers: the reply text (Markdown), a reply plus an effect to run after the inbound
 * transaction commits, or `turnInput`: run a turn with this text as its input instead of the message's
 * (`/<skill-name> args` loads the skill this way). With `replay`, `turnInput` is a stored user message
 * answered again as it was (`/retry`): in a shared group it already carries its sender's tag, so it gets
 * none again (the sender stays the person who wrote it, whoever asked for the retry). With `resume`
 * the turn resumes a held call instead (`/approve`, `/deny`), and `turnInput` only describes it.
 */
export type CommandResult =
  | string
  | { reply: string; after?: () => void }
  | {
      turnInput: string;
      replay?: boolean | undefined;
      resume?: TurnResume | undefined;
      after?: () => void;
    }
  | DeferredAnswer;

/**
 * An answer that takes longer than a command may (a model call: `/compress`, a download: `/skills
 * install`): `notice` is sent at once (the API keeps it for the final answer), `answer` starts after the
 * inbound transaction commits and its text is sent as the reply, with `buttons` under it when it has
 * some (each button's `data` is the command a click sends; platforms without buttons get the text
 * fallback). `answer` should resolve with a user-phrased text even on failure; a rejection is reported
 * to the user as a generic failure and logged.
 */
export interface DeferredAnswer {
  notice: string;
  answer: () => Promise<string | { reply: string; buttons?: OutboundButton[][] | undefined }>;
}

/** Who may run a command: everyone the gateway admits, or only owners. */
export type CommandAccess = "everyone" | "owner";

/**
 * A command. `run` returns a `CommandResult`, or undefined to fall through to the model (for commands
 * that only sometimes apply). It runs inside the inbound transaction: state changes it makes commit
 * with the ledger entry. It must not throw for user mistakes: return a message saying the fix.
 */
export interface Command {
  /** One line for /help and the platforms' command menus (Discord takes up to 100 characters). */
  description: string;
  /** Hidden commands work but are not listed by /help or the menus. */
  hidden?: boolean;
  /** Who may run it; others are told it is for the owner and don't see it in /help. @defaultValue "everyone" */
  access?: CommandAccess | undefined;
  run(ctx: CommandContext): CommandResult | undefined;
}

/**
 * Answers a command name no registered command claims (`/<skill-name>`), or returns undefined to let
 * the next resolver try. Resolvers are asked in the order they were added; the first answer wins.
 */
export type CommandResolver = (name: string, ctx: CommandContext) => CommandResult | undefined;

/** What a feature adds to the gateway's commands: named commands and resolvers for other names. */
export interface CommandModule {
  commands?: Readonly<Record<string, Command>> | undefined;
  resolvers?: readonly CommandResolver[] | undefined;
}
