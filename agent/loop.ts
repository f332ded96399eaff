/**
 * The agent loop: one turn of model calls and tool runs, from a `TurnJob` to a `TurnResult`.
 * Text streams out as progress; the tool calls of one response run in parallel; the loop ends when the
 * model answers without tool calls or the step cap is reached.
 */
import { describeError, HeraldError, isAbortError, ModelError } from "../core/errors.js";
import { type Logger, lazyChild } from "../core/logger.js";
import type {
  ModelUsage,
  ProviderAlert,
  TurnJob,
  TurnProgress,
  TurnResult,
  TurnUsage,
} from "../core/turn.js";
import type { ChatMessage, InboundAttachment, ToolCall } from "../core/types.js";
import { compressIfNeeded, repairToolPairs } from "./compression.js";
import { buildUserMessage } from "./input.js";
import { TurnTools } from "./lazy-tools.js";
import type { ModelClient, ModelMessage } from "./model-client.js";
import { cancelledError } from "./model-errors.js";
import type { ToolRegistry } from "./tool-registry.js";
import type { StateClient, Tool, ToolOutput, TurnHooks } from "./types.js";
import type { SpeakReply } from "./voice-reply.js";

/** What a turn runs with. */
export interface TurnDeps {
  model: ModelClient;
  tools: ToolRegistry;
  state: StateClient;
  logger: Logger;
  /** `HERALD_HOME`, passed to tools. */
  homeDir: string;
  /** Aborts the turn: the model call, every tool, the retries' waits. */
  signal: AbortSignal;
  /** Receives progress events. Should not throw (a throw is logged and ignored). */
  progress(event: TurnProgress): void;
  /** The queue's slot lending for waits (see `JobHandler`); absent outside a queue. */
  idle?: (<T>(work: Promise<T>) => Promise<T>) | undefined;
  /**
   * Makes the turn's attachments reachable from the tools (copies them into the session's workspace)
   * and says where the model finds each: original path → path for the model. May throw: the turn then
   * names the original paths.
   */
  stageAttachments?: ((job: TurnJob) => Promise<ReadonlyMap<string, string>>) | undefined;
  /** Speech to text for voice notes and audio attachments (before the first model call). */
  transcribe?: ((attachment: InboundAttachment, signal?: AbortSignal) => Promise<string>) | undefined;
  /** Text to speech for chats with voice replies on (`job.voiceReply`); see `agent/voice-reply.ts`. */
  speakReply?: SpeakReply | undefined;
  /** Plugins' filters around tool calls and before the reply. @defaultValue none */
  hooks?: TurnHooks | undefined;
  /** Model for context summaries (`auxiliary.compression`). @defaultValue the turn's model */
  compressionModel?: string | undefined;
}

/** What a turn's model calls added up to, and the alerts they raised; filled as the turn runs. */
interface TurnTally {
  usage: TurnUsage;
  alerts: ProviderAlert[];
}

/** Adds one model call's tokens to the turn's totals and to its model's line. */
function addUsage(
  usage: TurnUsage,
  model: string,
  u: { promptTokens: number; completionTokens: number; cachedTokens?: number | undefined },
): void {
  const cached = u.cachedTokens ?? 0;
  usage.promptTokens += u.promptTokens;
  usage.completionTokens += u.completionTokens;
  usage.cachedTokens = (usage.cachedTokens ?? 0) + cached;
  usage.modelCalls++;
  usage.byModel ??= [];
  const byModel = usage.byModel;
  let line: ModelUsage | undefined = byModel.find((m) => m.model === model);
  if (!line) {
    line = { model, promptTokens: 0, completionTokens: 0, cachedTokens: 0, calls: 0 };
    byModel.push(line);
  }
  line.promptTokens += u.promptTokens;
  line.completionTokens += u.completionTokens;
  line.cachedTokens += cached;
  line.calls++;
}

type Files = NonNullable<ToolOutput["files"]>;

/** The step cap when neither the job nor the config sets one. */
export const DEFAULT_MAX_ITERATIONS = 90;

/**
 * Runs one turn.
 * @returns `ok` with the user message and every assistant/tool message of the turn in order, or
 * `failed` (model unreachable, bad key…) with a user-phrased message and only the user message.
 * @throws the cancelled error (`isAbortError` is true) when `deps.signal` fires; the caller discards the turn.
 */
export async function runTurn(job: TurnJob, deps: TurnDeps): Promise<TurnResult> {
  const log = lazyChild(deps.logger, { turnId: job.turnId, sessionKey: job.origin.sessionKey });
  const emit = (event: TurnProgress) => {
    try {
      deps.progress(event);
    } catch (err) {
      log.warn({ err: describeError(err) }, "progress listener threw");
    }
  };
  let staged: ReadonlyMap<string, string> | undefined;
  if (job.input.attachments?.length && deps.stageAttachments) {
    staged = await deps.stageAttachments(job).catch((err: unknown) => {
      log.warn({ err: describeError(err) }, "attachments not copied into the workspace");
      return undefined;
    });
  }
  const { stored: userMessage, forModel } = await buildUserMessage(job.input, {
    vision: deps.model.catalog.vision(job.model ?? deps.model.catalog.defaultModel),
    pathFor: staged ? (a) => staged.get(a.path) ?? a.path : undefined,
    transcribe: deps.transcribe,
    signal: deps.signal,
  });
  const tally: TurnTally = {
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, modelCalls: 0, toolCalls: 0 },
    alerts: [],
  };
  try {
    const result = await loop(job, deps, log, emit, userMessage, forModel, tally);
    return deps.hooks?.has("beforeReply") ? await rewriteReply(result, job, deps.hooks) : result;
  } catch (err) {
    if (deps.signal.aborted || isAbortError(err))
      throw isAbortError(err) ? err : cancelledError(deps.signal.reason);
    const known = err instanceof HeraldError;
    if (!known) log.error({ err: describeError(err) }, "turn failed");
    else log.warn({ err: describeError(err), code: err.code }, "turn failed");
    return {
      kind: "failed",
      turnId: job.turnId,
      userMessage: known
        ? err.message
        : "Something went wrong on my side while answering; the details are in the gateway log. Please try again.",
      error: describeError(err),
      retryable: known ? err.retryable : false,
      code: known ? err.code : undefined,
      retryAfterMs: err instanceof ModelError ? err.retryAfterMs : undefined,
      messages: [userMessage],
      ...(tally.usage.modelCalls ? { usage: tally.usage } : {}),
      ...(tally.alerts.length ? { alerts: tally.alerts } : {}),
    };
  }
}

async function loop(
  job: TurnJob,
  deps: TurnDeps,
  log: Logger,
  emit: (event: TurnProgress) => void,
  userMessage: ChatMessage,
  forModel: ModelMessage,
  tally: TurnTally,
): Promise<TurnResult> {
  const { model: client, signal } = deps;
  // A child of delegate_task never gets the tools its parent keeps (todo, clarify).
  const excluded = job.excludedTools;
  const enabled = deps.tools.forToolsets(job.toolsets);
  const turnTools = new TurnTools(
    excluded?.length ? enabled.filter((t) => !excluded.includes(t.name)) : enabled,
    job.eagerToolsets,
    (t) => deps.tools.toolsetSummary(t),
  );
  // Loaded in earlier turns of the session: their schemas come in the same order as before.
  turnTools.noteHistory(job.history.map((h) => h.message));
  const tools = turnTools.allowed;
  let toolsJson = turnTools.json;
  const systemPrompt = turnTools.systemPrompt(job.systemPrompt);
  const modelName = job.model ?? client.catalog.defaultModel;
  const maxIterations = job.maxIterations ?? client.config.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const { usage } = tally;

  const compress = async (force: boolean) => {
    const result = await compressIfNeeded({
      systemPrompt,
      history: job.history,
      input: forModel,
      tools: toolsJson,
      client,
      model: deps.compressionModel ?? modelName,
      contextModel: modelName,
      force,
      signal,
      logger: log,
    });
    if (result.usage) addUsage(usage, result.model ?? modelName, result.usage);
    return result;
  };
  let compressed = await compress(false);

  const system = systemPrompt ? [{ role: "system" as const, content: systemPrompt }] : [];
  let history = repairToolPairs(compressed.history);
  // The todo plan after a compaction summary: after the stable prefix, before the user's message.
  const plan = await planNote(history, deps.state, job, log);
  const note: ModelMessage[] = plan ? [{ role: "system", content: plan }] : [];
  const messages: ModelMessage[] = [...system, ...history, ...note, forModel];
  const turnMessages: ChatMessage[] = [userMessage];
  const files: Files = [];
  let modelUsed = modelName;
  const finish = (text: string, buttons?: ToolOutput["buttons"]): TurnResult => ({
    kind: "ok",
    turnId: job.turnId,
    messages: turnMessages,
    reply: { text, ...(files.length > 0 ? { files } : {}), ...(buttons?.length ? { buttons } : {}) },
    compaction: compressed.compaction,
    usage,
    model: modelUsed,
    ...(tally.alerts.length ? { alerts: tally.alerts } : {}),
  });
  const call = () =>
    client.streamChat({
      model: modelName,
      messages,
      tools: toolsJson.length > 0 ? toolsJson : undefined,
      signal,
      reasoningEffort: job.reasoningEffort,
      stableCount: system.length + history.length,
      onAlert: (alert) => tally.alerts.push(alert),
      onTextDelta: job.streamText
        ? (text) => emit({ type: "text-delta", turnId: job.turnId, text })
        : undefined,
    });
  let forced = false;

  for (let step = 1; step <= maxIterations; step++) {
    let response: Awaited<ReturnType<ModelClient["streamChat"]>>;
    try {
      response = await call();
    } catch (err) {
      // The model says the request does not fit: compress the stored history now and try once more.
      if (forced || !(err instanceof HeraldError) || err.code !== "model_context_too_long") throw err;
      forced = true;
      const again = await compress(true);
      if (!again.compaction) throw err;
      log.info(
        { uptoSeq: again.compaction.uptoSeq },
        "context too long for the model; compressed and retrying",
      );
      compressed = again;
      const turnSoFar = messages.slice(system.length + history.length + note.length + 1);
      history = repairToolPairs(again.history);
      messages.splice(0, messages.length, ...system, ...history, ...note, forModel, ...turnSoFar);
      response = await call();
    }
    addUsage(usage, response.model, response.usage);
    modelUsed = response.model;
    const assistant: ChatMessage = response.message;
    messages.push(assistant);
    turnMessages.push(assistant);
    const calls = response.message.tool_calls ?? [];
    if (calls.length === 0) return finish(response.message.content ?? "");

    const outputs = await Promise.all(calls.map((call) => runTool(call, tools, job, deps, log, emit)));
    usage.toolCalls += calls.length;
    // Toolsets this step loaded: their schemas go with every later request (appended: the prefix holds).
    if (turnTools.note(calls)) toolsJson = turnTools.json;
    outputs.forEach((output, i) => {
      // Keys in the order the session store gives them back: the next turn's request repeats these bytes.
      const tool: ChatMessage = { role: "tool", content: output.content, tool_call_id: calls[i]!.id };
      messages.push(tool);
      turnMessages.push(tool);
      files.push(...(output.files ?? []));
    });
    const stopper = outputs.find((o) => o.stopTurn);
    const stop = stopper?.stopTurn;
    if (stop) {
      if (job.streamText) emit({ type: "text-delta", turnId: job.turnId, text: stop });
      turnMessages.push({ role: "assistant", content: stop });
      return finish(stop, stopper.buttons);
    }
  }

  log.warn({ maxIterations }, "turn hit the step cap");
  const text = `I stopped after ${maxIterations} steps without finishing; that is my limit for one message. Say "continue" if you want me to keep going.`;
  if (job.streamText) emit({ type: "text-delta", turnId: job.turnId, text });
  turnMessages.push({ role: "assistant", content: text });
  return finish(text);
}

/**
 * The session's plan (`todo`) as a note for the model, when a summary replaced the calls that made it:
 * the history starts with a summary and holds no `todo` call. Undefined otherwise, or when there is no
 * plan (or it cannot be read: the turn goes on without it).
 */
async function planNote(history: readonly ChatMessage[], state: StateClient, job: TurnJob, log: Logger) {
  if (!state.todo || history[0]?.role !== "system") return undefined;
  const used = history.some(
    (m) => m.role === "assistant" && m.tool_calls?.some((c) => c.function.name === "todo"),
  );
  if (used) return undefined;
  const items = await state.todo.get(job.origin.sessionKey).catch((err: unknown) => {
    log.warn({ err: describeError(err) }, "the plan could not be read; the turn goes on without it");
    return [];
  });
  if (items.length === 0) return undefined;
  const lines = items.map((i) => `${i.id}. [${i.status}] ${i.text}`);
  return [
    "[Your plan for this conversation (the todo tool keeps it; earlier steps were summarised):]",
    ...lines,
  ].join("\n");
}

/** One tool call with its progress events; never throws except on abort. */
async function runTool(
  call: ToolCall,
  tools: readonly Tool[],
  job: TurnJob,
  deps: TurnDeps,
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
  emit({ type: "tool-end", turnId, callId: call.id, name, ok: !output.isError, durationMs });
  return output;
}

/** The reply of an `ok` turn after the `beforeReply` hooks; the stored final message follows it. */
async function rewriteReply(result: TurnResult, job: TurnJob, hooks: TurnHooks): Promise<TurnResult> {
  if (result.kind !== "ok") return result;
  const text = await hooks.beforeReply(result.reply.text, job.origin);
  if (text === result.reply.text) return result;
  const last = result.messages.at(-1);
  const messages =
    last?.role === "assistant" && last.content === result.reply.text
      ? [...result.messages.slice(0, -1), { ...last, content: text }]
      : result.messages;
  return { ...result, messages, reply: { ...result.reply, text } };
}

/** A call's arguments as JSON when they parse, else the raw string (for hooks). */
function parseOrRaw(raw: string): unknown {
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
