/** The registry of slash commands the gateway knows, and the resolvers asked for other names. */
import type {
  Command,
  CommandContext,
  CommandModule,
  CommandResolver,
  CommandResult,
} from "../core/commands.js";
import type { CommandMenuEntry } from "../core/types.js";

/** What decides who sees and runs a command. */
type Caller = Pick<CommandContext, "isOwner">;

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

  /** The names of every registered command, hidden ones included (resolvers answer other names). */
  names(): string[] {
    return [...this.commands.keys()];
  }

  /**
   * The command called `name`. Telegram's menu cannot carry hyphens, so `/my_command` also finds
   * `my-command`.
   */
  get(name: string): Command | undefined {
    const lower = name.toLowerCase();
    return this.commands.get(lower) ?? this.commands.get(lower.replaceAll("_", "-"));
  }

  /**
   * What `/name` answers: the registered command's result, else the first resolver's answer; undefined
   * when nothing claims it (the text then goes to the model). An owner-only command run by someone
   * else answers that it is the owner's.
   */
  resolve(name: string, ctx: CommandContext): CommandResult | undefined {
    const command = this.get(name);
    if (command) {
      if (!mayRun(command, ctx)) return `/${name.toLowerCase()} is for the owner only.`;
      return command.run(ctx);
    }
    for (const resolver of this.resolvers) {
      const result = resolver(name, ctx);
      if (result !== undefined) return result;
    }
    return undefined;
  }

  /** The /help text: one line per command this caller may run (owner-only ones only for owners). */
  helpText(caller: Caller = {}): string {
    const lines = [...this.commands.entries()]
      .filter(([, c]) => !c.hidden && mayRun(c, caller))
      .map(([name, c]) => `/${name} — ${c.description}`);
    return ["Commands:", ...lines].join("\n");
  }

  /**
   * The commands a caller may run, for menus and completion (hidden ones left out; owner-only ones only
   * for an owner). @defaultValue caller: anyone, so the platforms' menus list what everyone may run
   */
  menu(caller: Caller = {}): CommandMenuEntry[] {
    return [...this.commands.entries()]
      .filter(([, c]) => !c.hidden && mayRun(c, caller))
      .map(([name, c]) => ({ name, description: c.description }));
  }
}

function mayRun(command: Command, caller: Caller): boolean {
  return (command.access ?? "everyone") === "everyone" || caller.isOwner === true;
}
