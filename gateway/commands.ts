/** The registry of slash commands the gateway knows. */
import type { Command, CommandContext, CommandResult } from "../core/commands.js";

/** The commands the gateway knows. */
export class CommandRegistry {
  private readonly commands = new Map<string, Command>();
  /** Resolves names no command claims (e.g. `/<skill-name>`); returns undefined when it has nothing. */
  fallback: ((name: string, ctx: CommandContext) => CommandResult | undefined) | undefined;

  register(name: string, command: Command): void {
    this.commands.set(name.toLowerCase(), command);
  }

  get(name: string): Command | undefined {
    return this.commands.get(name.toLowerCase());
  }

  /** The /help text, one line per visible command. */
  helpText(): string {
    const lines = [...this.commands.entries()]
      .filter(([, c]) => !c.hidden)
      .map(([name, c]) => `/${name} — ${c.description}`);
    return ["Commands:", ...lines].join("\n");
  }
}
