/**
 * Lean requests: which tool schemas a turn's requests carry. With lazy tools on (the job names its
 * eager toolsets), a request carries the schemas of the eager toolsets, of `load_tools`, and of each
 * toolset the session loaded, appended in the order it loaded them; the other enabled toolsets are
 * listed by name and tool names in one system prompt section, which never changes within a session.
 *
 * A toolset counts as loaded once the session's history holds a `load_tools` call naming it or a call
 * to one of its tools. Nothing else keeps that state: any worker derives the same tools, in the same
 * order, from the same history, so the request prefix stays byte-stable from turn to turn; a
 * compaction that summarises those calls away unloads them again (the prefix changes then anyway).
 * Every enabled tool may be called at any time: a call to a tool not loaded yet runs and loads it.
 */
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import { z } from "zod";
import type { ChatMessage, ToolCall } from "../core/types.js";
import { defineTool, toOpenAITools } from "./tool-registry.js";
import type { Tool } from "./types.js";

/** The name of the tool that loads toolsets. */
export const LOAD_TOOLS = "load_tools";

/** The tools of one turn: what its requests carry and what its calls may run. */
export class TurnTools {
  /** Every tool a call may run: all enabled tools, loaded or not, and `load_tools` when it is offered. */
  readonly allowed: readonly Tool[];
  /** The system prompt section listing the toolsets not sent up front; "" when there are none. */
  readonly index: string;
  readonly #enabled: readonly Tool[];
  /** Toolsets sent only once loaded, by name (undefined: everything is sent, the behaviour before). */
  readonly #lazy: ReadonlyMap<string, readonly Tool[]> | undefined;
  readonly #loaded: string[] = [];
  readonly #eagerJson: ChatCompletionFunctionTool[];
  #json: ChatCompletionFunctionTool[];

  /**
   * @param enabled the turn's tools, in registry order.
   * @param eagerToolsets toolsets whose schemas every request carries; undefined sends every schema.
   * @param summaryOf a toolset's one-line summary for the list (may give undefined: names only).
   */
  constructor(
    enabled: readonly Tool[],
    eagerToolsets: readonly string[] | undefined,
    summaryOf: (toolset: string) => string | undefined = () => undefined,
  ) {
    this.#enabled = enabled;
    const layout = layoutOf(enabled, eagerToolsets, summaryOf);
    this.index = layout.index;
    if (!layout.lazy) {
      this.allowed = enabled;
      this.#eagerJson = layout.eagerJson;
    } else {
      this.#lazy = layout.lazy;
      this.allowed = [...enabled, loadToolsTool(this)];
      this.#eagerJson = layout.eagerJson;
    }
    this.#json = this.#eagerJson;
  }

  /**
   * `systemPrompt` with the list of toolsets not sent up front after it (the same string instance for
   * the same inputs, so a session's requests do not build it again).
   */
  systemPrompt(systemPrompt: string): string {
    if (!this.index) return systemPrompt;
    let byPrompt = prompts.get(this.index);
    if (!byPrompt) {
      if (prompts.size >= MEMO_SIZE) prompts.clear();
      byPrompt = new Map();
      prompts.set(this.index, byPrompt);
    }
    let full = byPrompt.get(systemPrompt);
    if (full === undefined) {
      if (byPrompt.size >= MEMO_SIZE) byPrompt.clear();
      full = systemPrompt ? `${systemPrompt}\n\n${this.index}` : this.index;
      byPrompt.set(systemPrompt, full);
    }
    return full;
  }

  /** The tool schemas the next request carries (the same array until something loads). */
  get json(): ChatCompletionFunctionTool[] {
    return this.#json;
  }

  /** Lazy toolsets loaded so far, in load order. */
  get loaded(): readonly string[] {
    return this.#loaded;
  }

  /** The toolsets not sent up front, by name. */
  get lazyToolsets(): string[] {
    return [...(this.#lazy?.keys() ?? [])].sort();
  }

  /** Notes every tool call of `messages` (a session's history) in order; see `note`. */
  noteHistory(messages: readonly ChatMessage[]): void {
    for (const message of messages)
      if (message.role === "assistant" && message.tool_calls) this.note(message.tool_calls);
  }

  /**
   * Notes one response's tool calls, in their order: the toolsets `load_tools` names and those of the
   * tools called become loaded. @returns whether the schemas changed.
   */
  note(calls: readonly ToolCall[]): boolean {
    const lazy = this.#lazy;
    if (!lazy) return false;
    const before = this.#loaded.length;
    for (const call of calls) {
      const name = call.function.name;
      const wanted =
        name === LOAD_TOOLS
          ? requestedToolsets(call.function.arguments)
          : [this.#enabled.find((t) => t.name === name)?.toolset];
      for (const toolset of wanted)
        if (toolset && lazy.has(toolset) && !this.#loaded.includes(toolset)) this.#loaded.push(toolset);
    }
    if (this.#loaded.length === before) return false;
    this.#json = [...this.#eagerJson, ...toOpenAITools(this.#loaded.flatMap((t) => lazy.get(t) ?? []))];
    return true;
  }

  /** What `load_tools` answers for `names`, before the loop notes the call. */
  describeLoad(names: readonly string[]): { content: string; isError?: boolean } {
    const lazy = this.#lazy ?? new Map<string, readonly Tool[]>();
    const lines: string[] = [];
    let loadedAny = false;
    for (const name of new Set(names)) {
      const tools = lazy.get(name);
      if (!tools) {
        const known = this.#enabled.some((t) => t.toolset === name) || name === "core";
        lines.push(
          known
            ? `${name}: always loaded.`
            : `${name}: no such toolset here. You can load: ${this.lazyToolsets.join(", ")}.`,
        );
        continue;
      }
      loadedAny = true;
      const what = tools.map((t) => t.name).join(", ");
      lines.push(
        this.#loaded.includes(name)
          ? `${name}: loaded already (${what}).`
          : `${name}: loaded (${what}); call them from your next step on.`,
      );
    }
    return loadedAny || lines.every((l) => l.endsWith("always loaded."))
      ? { content: lines.join("\n") }
      : { content: `error: ${lines.join("\n")}`, isError: true };
  }
}

/** What a set of enabled tools and eager toolsets gives, the same for every turn that has them. */
interface Layout {
  lazy: ReadonlyMap<string, readonly Tool[]> | undefined;
  index: string;
  eagerJson: ChatCompletionFunctionTool[];
}

// Turns of a process mostly have the same tools: work out their layout once, not per model call.
const MEMO_SIZE = 64;
const layouts = new Map<string, Layout>();
const prompts = new Map<string, Map<string, string>>();
const toolIds = new WeakMap<Tool, number>();
let nextToolId = 1;

function layoutOf(
  enabled: readonly Tool[],
  eagerToolsets: readonly string[] | undefined,
  summaryOf: (toolset: string) => string | undefined,
): Layout {
  let key = eagerToolsets ? eagerToolsets.join(",") : "*";
  for (const tool of enabled) {
    let id = toolIds.get(tool);
    if (id === undefined) {
      id = nextToolId++;
      toolIds.set(tool, id);
    }
    key += ` ${id}`;
  }
  let layout = layouts.get(key);
  if (layout) return layout;
  const lazy = new Map<string, Tool[]>();
  if (eagerToolsets) {
    const eager = new Set(eagerToolsets);
    for (const tool of enabled) {
      if (eager.has(tool.toolset)) continue;
      const list = lazy.get(tool.toolset) ?? [];
      list.push(tool);
      lazy.set(tool.toolset, list);
    }
  }
  layout =
    lazy.size === 0
      ? { lazy: undefined, index: "", eagerJson: toOpenAITools(enabled) }
      : {
          lazy,
          index: indexOf(lazy, summaryOf),
          eagerJson: [...toOpenAITools(enabled.filter((t) => !lazy.has(t.toolset))), loadToolsJson()],
        };
  if (layouts.size >= MEMO_SIZE) layouts.clear();
  layouts.set(key, layout);
  return layout;
}

/** The toolset names of a `load_tools` call's arguments; nothing when they do not parse. */
function requestedToolsets(raw: string): string[] {
  try {
    const value = JSON.parse(raw) as { toolsets?: unknown };
    return Array.isArray(value.toolsets) ? value.toolsets.filter((t) => typeof t === "string") : [];
  } catch {
    return [];
  }
}

/** The list of toolsets not sent up front, sorted by name so it never depends on registration order. */
function indexOf(
  lazy: ReadonlyMap<string, readonly Tool[]>,
  summaryOf: (toolset: string) => string | undefined,
): string {
  const lines = [...lazy.keys()].sort().map((name) => {
    const tools = lazy
      .get(name)!
      .map((t) => t.name)
      .sort()
      .join(", ");
    const summary = summaryOf(name);
    return `- ${name} (${tools})${summary ? `: ${summary}` : ""}`;
  });
  return [
    `More toolsets, not loaded yet. Load what the task needs with ${LOAD_TOOLS}; loaded tools stay for the rest of this conversation. Calling one of these tools directly also loads its toolset.`,
    ...lines,
  ].join("\n");
}

const parameters = z.object({
  toolsets: z.array(z.string()).min(1).describe("Toolset names from the system prompt's list."),
});

/** `load_tools` for one turn: answers from the turn's view; the loop then adds the schemas. */
function loadToolsTool(view: TurnTools): Tool {
  return defineTool({
    name: LOAD_TOOLS,
    description: "Load toolsets listed in the system prompt; their tools stay loaded for this conversation.",
    parameters,
    toolset: "core",
    label: ({ toolsets }) => `🧰 ${toolsets.join(", ")}`,
    async execute({ toolsets }) {
      return view.describeLoad(toolsets);
    },
  });
}

// One schema object for every turn: the same bytes, converted once (each turn's tool is a new object).
let loadJson: ChatCompletionFunctionTool | undefined;
function loadToolsJson(): ChatCompletionFunctionTool {
  loadJson ??= toOpenAITools([loadToolsTool(new TurnTools([], undefined))])[0]!;
  return loadJson;
}
