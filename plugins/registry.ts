/**
 * The tool registry a turn sees when plugins are loaded: the process's built-in tools plus whatever
 * the plugin host holds at that moment, so `/reload-plugins` takes effect from the next turn.
 */
import { ToolRegistry } from "../agent/tool-registry.js";
import type { Tool } from "../agent/types.js";

/**
 * Built-in tools by toolset, plus the plugins' tools in every turn (a plugin is the owner's choice;
 * `herald plugins disable` removes its tools).
 */
export class PluginToolRegistry extends ToolRegistry {
  constructor(
    private readonly base: ToolRegistry,
    private readonly plugins: () => readonly Tool[],
  ) {
    super();
  }

  override register(...tools: Tool[]): this {
    this.base.register(...tools);
    return this;
  }

  override get(name: string): Tool | undefined {
    return this.base.get(name) ?? this.plugins().find((t) => t.name === name);
  }

  override toolsets(): string[] {
    const sets = this.base.toolsets();
    return this.plugins().length > 0 && !sets.includes("plugins") ? [...sets, "plugins"] : sets;
  }

  override toolsetSummary(toolset: string): string | undefined {
    return toolset === "plugins" ? "tools of the installed plugins" : this.base.toolsetSummary(toolset);
  }

  override forToolsets(names: readonly string[]): Tool[] {
    return [...this.base.forToolsets(names), ...this.plugins()];
  }
}
