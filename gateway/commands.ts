/** The registry of slash commands the gateway knows, and the resolvers asked for other names. */
import type {
  Command,
  CommandContext,
  CommandModule,
  CommandResolver,
  CommandResult,
} from "../core/commands.js";

/** The commands the gateway knows. */
export class CommandRegistry {
  private readonly commands = new Map<string, Command>();
  private readonly resolvers: CommandResolver[] = [];

  register(name: string, command: Command): void {
    this.commands.set(name.toLowerCase(), command);
  }

  /** Adds a feature's commands and resolvers (resolvers after those added before). */
  add(module: CommandModule): void {
    for (const [name, command] of Object.entries(module.commands ?? {})) this.register(name, command);
    this.resolvers.push(...(module.resolvers ?? []));
  }

  get(name: string): Command | undefined {
    return this.commands.get(name.toLowerCase());
  }

  /**
   * What `/name` answers: the registered command's result, else the first resolver's answer; undefined
   * when nothing claims it (the text then goes to the model).
   */
  resolve(name: string, ctx: CommandContext): CommandResult | undefined {
    const command = this.get(name);
    if (command) return command.run(ctx);
    for (const resolver of this.resolvers) {
      const result = resolver(name, ctx);
      if (result !== undefined) return result;
    }
    return undefined;
  }

  /** The /help text, one line per visible command. */
  helpText(): string {
    const lines = [...this.commands.entries()]
      .filter(([, c]) => !c.hidden)
      .map(([name, c]) => `/${name} — ${c.description}`);
    return ["Commands:", ...lines].join("\n");
  }
}
