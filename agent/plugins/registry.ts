/**
 * The tool registry a turn sees when plugins are loaded: the process's built-in tools plus whatever
 * the plugin host holds at that moment, so `/reload-plugins` takes effect from the next turn.
 */
import { ToolRegistry } from "../tool-registry.js";
import type { Tool } from "../types.js";
import { OWNERS_PLUGINS_TOOLSET, PLUGINS_TOOLSET } from "./host.js";

/**
 * Built-in tools by toolset, plus the plugins' tools: those of toolset `plugins` in every turn (a plugin
 * is the owner's choice; `herald plugins disable` removes its tools), those of `plugins_owners` in turns
 * whose toolsets name it (an owner's).
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
    return [...new Set([...this.base.toolsets(), ...this.plugins().map((t) => t.toolset)])];
  }

  override toolsetSummary(toolset: string): string | undefined {
    if (toolset === PLUGINS_TOOLSET) return "tools of the installed plugins";
    if (toolset === OWNERS_PLUGINS_TOOLSET) return "tools of the installed plugins for owners";
    return this.base.toolsetSummary(toolset);
  }

  override forToolsets(names: readonly string[]): Tool[] {
    const plugins = this.plugins().filter((t) => t.toolset === PLUGINS_TOOLSET || names.includes(t.toolset));
    return [...this.base.forToolsets(names), ...plugins];
  }
}
