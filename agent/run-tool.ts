/**
 * One tool call of a turn: progress events around it, the plugins' hooks before and after, and the
 * tool's own errors turned into a result the model reads.
 */
import { describeError, isAbortError } from "../core/errors.js";
import { type Logger, lazyChild } from "../core/logger.js";
import type { TurnJob, TurnProgress } from "../core/turn.js";
import type { ToolCall } from "../core/types.js";
import type { ToolRegistry } from "./tool-registry.js";
import type { StateClient, Tool, ToolOutput, TurnHooks } from "./types.js";

/** What a tool call runs with (a part of the turn's dependencies). */
export interface ToolRunDeps {
  tools: ToolRegistry;
  state: StateClient;
  /** `HERALD_HOME`, passed to tools. */
  homeDir: string;
  /** Aborts the turn: the model call, every tool, the retries' waits. */
  signal: AbortSignal;
  /** The queue's slot lending for waits (see `JobHandler`); absent outside a queue. */
  idle?: (<T>(work: Promise<T>) => Promise<T>) | undefined;
  /** Plugins' filters around tool calls and before the reply. @defaultValue none */
  hooks?: TurnHooks | undefined;
  /**
   * Called before each call of a tool that may change the workspace (`Tool.changesWorkspace`), before
   * it runs (the checkpoints: the first call of a turn snapshots the workspace). Must not throw; `note`
   * reports a line to the chat. @defaultValue none
   */
  beforeChange?: ((job: TurnJob, note: (line: string) => void) => Promise<void>) | undefined;
}

/** One tool call with its progress events; never throws except on abort. */
export async function runTool(
  call: ToolCall,
  tools: readonly Tool[],
  job: TurnJob,
  deps: ToolRunDeps,
  log: Logger,
  emit: (event: TurnProgress) => void,
): Promise<ToolOutput> {
  const { turnId } = job;
  const name = call.function.name;
  const startedAt = performance.now();
  emit({
    type: "tool-start",
    turnId,
    callId: call.id,
    name,
    summary: summarizeArguments(call.function.arguments),
    label: labelOf(
      tools.find((t) => t.name === name),
      call.function.arguments,
    ),
  });
  let output: ToolOutput;
  const blocked = deps.hooks?.has("beforeToolCall")
    ? await deps.hooks.beforeToolCall(name, parseOrRaw(call.function.arguments), job.origin)
    : undefined;
  const tool = tools.find((t) => t.name === name);
  if (!blocked && tool?.changesWorkspace && deps.beforeChange)
    await deps.beforeChange(job, (line) => emit({ type: "status", turnId, text: line }));
  try {
    if (blocked) output = { content: `error: ${blocked}`, isError: true };
    else
      output = await deps.tools.run(call, tools, {
        signal: deps.signal,
        origin: job.origin,
        turnId,
        callId: call.id,
        turn: { toolsets: job.toolsets, depth: job.delegation?.depth ?? 0, model: job.model },
        state: deps.state,
        logger: lazyChild(log, { tool: name }),
        homeDir: deps.homeDir,
        progress: (line) => emit({ type: "status", turnId, text: line }),
        ...(deps.idle ? { idle: deps.idle } : {}),
        callTool: (nested, options) =>
          runTool(
            { id: nested.id, type: "function", function: { name: nested.name, arguments: nested.arguments } },
            options.tools ? tools.filter(options.tools) : tools,
            job,
            { ...deps, signal: options.signal },
            log,
            emit,
          ),
      });
  } catch (err) {
    if (deps.signal.aborted || isAbortError(err)) throw err;
    log.error({ tool: name, err: describeError(err) }, "tool boundary caught an error");
    output = { content: `error: ${name} failed: ${describeError(err)}`, isError: true };
  }
  if (deps.hooks?.has("afterToolCall") && !blocked) {
    const result = { content: output.content, isError: output.isError ?? false };
    const args = parseOrRaw(call.function.arguments);
    output = { ...output, content: await deps.hooks.afterToolCall(name, args, result, job.origin) };
  }
  const durationMs = Math.round(performance.now() - startedAt);
  emit({
    type: "tool-end",
    turnId,
    callId: call.id,
    name,
    ok: !output.isError,
    durationMs,
    result: resultPreview(output.content),
  });
  return output;
}

/** The first lines of a call's output, at most `maxChars` characters (the `tool-end` event's `result`). */
export function resultPreview(content: string, maxLines = 4, maxChars = 300): string {
  const head = content
    .slice(0, maxChars + 1)
    .split("\n")
    .slice(0, maxLines)
    .join("\n");
  return head.length > maxChars ? `${head.slice(0, maxChars - 1)}…` : head;
}

/** A call's arguments as JSON when they parse, else the raw string (for hooks). */
export function parseOrRaw(raw: string): unknown {
  try {
    return raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

/** The tool's own progress line for a call, or undefined (no label, arguments unreadable, a throw). */
function labelOf(tool: Tool | undefined, raw: string): string | undefined {
  if (!tool?.label) return undefined;
  try {
    const line = tool.label(raw.trim() ? JSON.parse(raw) : {});
    return line.length > 200 ? `${line.slice(0, 199)}…` : line;
  } catch {
    return undefined;
  }
}

/** A short human line for a tool call's arguments: `query: "deploy notes", limit: 3`. */
export function summarizeArguments(raw: string, maxChars = 100): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  let args: unknown;
  try {
    args = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return cut(raw, maxChars);
  }
  if (!args || typeof args !== "object" || Array.isArray(args)) return cut(JSON.stringify(args), maxChars);
  const parts = Object.entries(args).map(([k, v]) => {
    const value = typeof v === "string" ? `"${cut(v, 40)}"` : cut(JSON.stringify(v) ?? "", 40);
    return `${k}: ${value}`;
  });
  return cut(parts.join(", "), maxChars);
}
