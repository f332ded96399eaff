/**
 * The tool registry: tools grouped in named toolsets, their OpenAI `tools` JSON (from zod schemas),
 * and the one boundary where a tool call's arguments are validated and the tool runs.
 */
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import { z } from "zod";
import { describeError, isAbortError } from "../core/errors.js";
import type { ToolCall } from "../core/types.js";
import type { Tool, ToolContext, ToolOutput } from "./types.js";

/** A tool result longer than this is cut (the model's context is not a log file). */
const MAX_OUTPUT_CHARS = 50_000;

/** Why a toolset is off in this process, and the fix (`herald doctor`, the start log). */
export interface UnavailableToolset {
  toolset: string;
  missing: string;
  fix: string;
}

/** Declares a tool with its argument type inferred from the zod schema. */
export function defineTool<P extends z.ZodType>(tool: Tool<P>): Tool {
  return tool as unknown as Tool;
}

/** Tools by name, grouped in toolsets ("core" holds `session_search`). */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  readonly #summaries = new Map<string, string>();

  /**
   * Sets the one-line summaries of toolsets (what the system prompt's list of not-yet-loaded toolsets
   * says of each, see agent/lazy-tools.ts). Keep each short and fixed: it is part of the prompt prefix.
   */
  describeToolsets(summaries: Readonly<Record<string, string>>): this {
    for (const [name, text] of Object.entries(summaries)) this.#summaries.set(name, text);
    return this;
  }

  /** The summary of `toolset`, if one was set. */
  toolsetSummary(toolset: string): string | undefined {
    return this.#summaries.get(toolset);
  }

  /** Adds tools. @throws Error when a name is taken (two tools of one name would shadow each other). */
  register(...tools: Tool[]): this {
    for (const tool of tools) {
      if (this.#tools.has(tool.name)) throw new Error(`A tool named '${tool.name}' is already registered.`);
      this.#tools.set(tool.name, tool);
    }
    return this;
  }

  /**
   * Replaces every tool of `toolset` with `tools` (a set that changes at run time: an MCP server's).
   * Turns that already started keep the tools they began with.
   * @throws Error when a new tool's name is taken by a tool of another toolset.
   */
  replaceToolset(toolset: string, tools: readonly Tool[]): this {
    for (const [name, tool] of this.#tools) if (tool.toolset === toolset) this.#tools.delete(name);
    return this.register(...tools.map((t) => (t.toolset === toolset ? t : { ...t, toolset })));
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Names of every toolset with at least one tool. */
  toolsets(): string[] {
    return [...new Set([...this.#tools.values()].map((t) => t.toolset))];
  }

  /** Tools of the named toolsets, in registration order. Unknown names give nothing. */
  forToolsets(names: readonly string[]): Tool[] {
    const wanted = new Set(names);
    return [...this.#tools.values()].filter((t) => wanted.has(t.toolset));
  }

  /**
   * Runs one tool call: parses and validates the arguments, then executes the tool among `allowed`.
   * Never throws except on abort: unknown tools, invalid arguments and tool errors come back as an
   * error result the model reads and can correct.
   */
  async run(call: ToolCall, allowed: readonly Tool[], ctx: ToolContext): Promise<ToolOutput> {
    const tool = allowed.find((t) => t.name === call.function.name);
    if (!tool) {
      const names = allowed.map((t) => t.name).join(", ") || "none";
      return errorOutput(`there is no tool named '${call.function.name}'. Available tools: ${names}.`);
    }
    const parsed = parseArguments(tool, call.function.arguments);
    if (!parsed.ok) return errorOutput(parsed.error);
    try {
      const output = await tool.execute(parsed.value, ctx);
      const result = typeof output === "string" ? { content: output } : output;
      return { ...result, content: truncate(result.content) };
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) throw err;
      ctx.logger.warn({ tool: tool.name, err: describeError(err) }, "tool failed");
      return errorOutput(`${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/** The OpenAI `tools` JSON of `tools`, parameters from each zod schema (zod 4 `z.toJSONSchema`). */
export function toOpenAITools(tools: readonly Tool[]): ChatCompletionFunctionTool[] {
  return tools.map(toolJson);
}

// A tool's schema never changes after it is defined: convert it once, not on every model call.
const toolJsonCache = new WeakMap<Tool, ChatCompletionFunctionTool>();

function toolJson(tool: Tool): ChatCompletionFunctionTool {
  const cached = toolJsonCache.get(tool);
  if (cached) return cached;
  const { $schema: _schema, ...parameters } =
    tool.jsonSchema ??
    (tighten(
      z.toJSONSchema(tool.parameters, {
        io: "input",
        unrepresentable: "any",
      }),
    ) as Record<string, unknown>);
  const json: ChatCompletionFunctionTool = {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters },
  };
  toolJsonCache.set(tool, json);
  return json;
}

/**
 * A zod-made schema without what tells the model nothing (the arguments are still validated by zod):
 * an integer's safe-integer bounds and `minLength: 1` (3 % of the built-in schemas' bytes).
 */
function tighten(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tighten);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === "maximum" || key === "minimum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER)
      continue;
    if (key === "minLength" && value === 1) continue;
    out[key] = tighten(value);
  }
  return out;
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** JSON-decodes and validates arguments; the error text tells the model what to fix. */
export function parseArguments(tool: Tool, raw: string): Parsed {
  let json: unknown;
  try {
    json = raw.trim() === "" ? {} : JSON.parse(raw);
  } catch (err) {
    return {
      ok: false,
      error: `the arguments for ${tool.name} are not valid JSON (${(err as Error).message}). Send a JSON object.`,
    };
  }
  const result = tool.parameters.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    error: `invalid arguments for ${tool.name}:\n${z.prettifyError(result.error)}\nCall it again with arguments that match its schema.`,
  };
}

function errorOutput(message: string): ToolOutput {
  return { content: `error: ${message}`, isError: true };
}

function truncate(content: string): string {
  if (content.length <= MAX_OUTPUT_CHARS) return content;
  return `${content.slice(0, MAX_OUTPUT_CHARS)}\n[output cut: ${content.length - MAX_OUTPUT_CHARS} more characters]`;
}

/** The tools as a session's agent has them (`Tool.forSession`), in their order. */
export function toolsOfSession(tools: readonly Tool[], sessionKey: string): Tool[] {
  return tools.flatMap((t) => {
    const own = t.forSession ? t.forSession(sessionKey) : t;
    return own ? [own] : [];
  });
}
