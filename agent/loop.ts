/**
 * The agent loop: one turn of model calls and tool runs, from a `TurnJob` to a `TurnResult`.
 * Text streams out as progress; the tool calls of one response run in parallel; the loop ends when the
 * model answers without tool calls or the step cap is reached.
 */
import { describeError, HeraldError, isAbortError, ModelError } from "../core/errors.js";
import { type Logger, lazyChild } from "../core/logger.js";
import type { ProviderAlert, TurnJob, TurnProgress, TurnResult, TurnUsage } from "../core/turn.js";
import { CLIENT_PENDING, completedClientStep } from "../core/turn-steps.js";
import type { ChatMessage, ClientToolCalls, InboundAttachment, ToolCall } from "../core/types.js";
import { clientStep, HELD_IN_CLIENT_STEP, withClientTools } from "./client-tools.js";
import { compressIfNeeded, repairToolPairs } from "./compression.js";
import { holdStep, resumeStep } from "./held-calls.js";
import { buildUserMessage } from "./input.js";
import { TurnTools } from "./lazy-tools.js";
import type { ModelClient, ModelMessage } from "./model-client.js";
import { cancelledError } from "./model-errors.js";
import { apiOf } from "./providers/index.js";
import { recallNote } from "./recall-note.js";
import { runTool, type ToolRunDeps } from "./run-tool.js";
import { toolsOfSession } from "./tool-registry.js";
import { addToolUsage, addUsage } from "./turn-usage.js";
import type { StateClient, ToolOutput, TurnHooks } from "./types.js";
import type { SpeakReply } from "./voice-reply.js";

export { summarizeArguments } from "./run-tool.js";

/** What a turn runs with. */
export interface TurnDeps extends ToolRunDeps {
  model: ModelClient;
  logger: Logger;
  /** Receives progress events. Should not throw (a throw is logged and ignored). */
  progress(event: TurnProgress): void;
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
  /** Model for context summaries (`auxiliary.compression`). @defaultValue the turn's model */
  compressionModel?: string | undefined;
  /**
   * A note features add for this turn before the user's message, after the stable prefix (the memory
   * providers' insights), or undefined. Must not reject and must bound its own wait. @defaultValue none
   */
  turnNote?: ((job: TurnJob) => Promise<string | undefined>) | undefined;
}

/** What a turn's model calls added up to, and the alerts they raised; filled as the turn runs. */
interface TurnTally {
  usage: TurnUsage;
  alerts: ProviderAlert[];
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
  // A resumed turn opens with its held call's step, which the loop runs first.
  const opening: Opening = job.resume ? { stored: [], forModel: [] } : await openingOf(job, deps, log);
  const tally: TurnTally = {
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, modelCalls: 0, toolCalls: 0 },
    alerts: [],
  };
  try {
    const result = await loop(job, deps, log, emit, opening, tally);
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
      messages: opening.stored,
      ...(tally.usage.modelCalls ? { usage: tally.usage } : {}),
      ...(tally.alerts.length ? { alerts: tally.alerts } : {}),
    };
  }
}

/** How a turn opens: the user's message (stored, and as the model gets it), or a resumed step. */
interface Opening {
  stored: ChatMessage[];
  forModel: ModelMessage[];
}

/**
 * The user's message of `job`, with its attachments made reachable from the tools; after the step the
 * client's tool outputs complete, when it sent some (then without a user message if it sent no text).
 */
async function openingOf(job: TurnJob, deps: TurnDeps, log: Logger): Promise<Opening> {
  const completed = job.input.clientResults ? completedClientStep(job.input.clientResults) : [];
  if (completed.length && !job.input.text.trim() && !job.input.attachments?.length)
    return { stored: completed, forModel: [...completed] };
  let staged: ReadonlyMap<string, string> | undefined;
  if (job.input.attachments?.length && deps.stageAttachments) {
    staged = await deps.stageAttachments(job).catch((err: unknown) => {
      log.warn({ err: describeError(err) }, "attachments not copied into the workspace");
      return undefined;
    });
  }
  const ref = job.model ?? deps.model.catalog.defaultModel;
  const target = deps.model.catalog.resolve(ref);
  const { stored, forModel } = await buildUserMessage(job.input, {
    vision: deps.model.catalog.vision(ref),
    // Anthropic reads PDFs itself (document blocks): the file goes, not its extracted text.
    pdfDocuments: target !== undefined && apiOf(target.provider) === "anthropic",
    pathFor: staged ? (a) => staged.get(a.path) ?? a.path : undefined,
    transcribe: deps.transcribe,
    signal: deps.signal,
  });
  return { stored: [...completed, stored], forModel: [...completed, forModel] };
}

async function loop(
  job: TurnJob,
  deps: TurnDeps,
  log: Logger,
  emit: (event: TurnProgress) => void,
  opening: Opening,
  tally: TurnTally,
): Promise<TurnResult> {
  const { model: client, signal } = deps;
  // A child of delegate_task never gets the tools its parent keeps (todo, clarify).
  const excluded = job.excludedTools;
  const enabled = toolsOfSession(deps.tools.forToolsets(job.toolsets), job.origin.sessionKey);
  const turnTools = new TurnTools(
    excluded?.length ? enabled.filter((t) => !excluded.includes(t.name)) : enabled,
    job.eagerToolsets,
    (t) => deps.tools.toolsetSummary(t),
  );
  // Loaded in earlier turns of the session: their schemas come in the same order as before.
  turnTools.noteHistory(job.history.map((h) => h.message));
  const tools = turnTools.allowed;
  // The client's own tools (API clients): a step calling one ends the turn with the calls for it.
  const clientNames = new Set(job.clientTools?.map((t) => t.name));
  const isClient = (c: ToolCall) => clientNames.has(c.function.name);
  const toolsJsonNow = () => withClientTools(turnTools.json, job.clientTools);
  let toolsJson = toolsJsonNow();
  const systemPrompt = turnTools.systemPrompt(job.systemPrompt);
  const modelName = job.model ?? client.catalog.defaultModel;
  const maxIterations = job.maxIterations ?? client.config.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const { usage } = tally;
  if (job.resume) {
    const step = await resumeStep(job.resume, (call) => runTool(call, tools, job, deps, log, emit));
    usage.toolCalls++;
    opening.stored.push(...step);
    opening.forModel.push(...step);
    if (turnTools.note([job.resume.call])) toolsJson = toolsJsonNow();
  }

  const compress = async (force: boolean) => {
    const result = await compressIfNeeded({
      systemPrompt,
      history: job.history,
      input: opening.forModel,
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
  const [recalled, extra] = await Promise.all([
    recallNote(job, deps.state, log),
    job.resume ? undefined : deps.turnNote?.(job),
  ]);
  const note: ModelMessage[] = [plan, recalled, extra].flatMap((content) =>
    content ? [{ role: "system" as const, content }] : [],
  );
  const messages: ModelMessage[] = [...system, ...history, ...note, ...opening.forModel];
  const turnMessages: ChatMessage[] = [...opening.stored];
  const files: Files = [];
  let modelUsed = modelName;
  const finish = (
    text: string,
    buttons?: ToolOutput["buttons"],
    clientCalls?: ClientToolCalls,
  ): TurnResult => ({
    kind: "ok",
    turnId: job.turnId,
    messages: turnMessages,
    reply: {
      text,
      ...(files.length > 0 ? { files } : {}),
      ...(buttons?.length ? { buttons } : {}),
      ...(clientCalls ? { clientCalls } : {}),
    },
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
  const clientPending: Awaited<ReturnType<typeof runTool>> = { content: CLIENT_PENDING };

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
      const turnSoFar = messages.slice(
        system.length + history.length + note.length + opening.forModel.length,
      );
      history = repairToolPairs(again.history);
      messages.splice(0, messages.length, ...system, ...history, ...note, ...opening.forModel, ...turnSoFar);
      response = await call();
    }
    addUsage(usage, response.model, response.usage);
    modelUsed = response.model;
    const assistant: ChatMessage = response.message;
    messages.push(assistant);
    turnMessages.push(assistant);
    const calls = response.message.tool_calls ?? [];
    if (calls.length === 0) return finish(response.message.content ?? "");

    const outputs = await Promise.all(
      calls.map((call) => (isClient(call) ? clientPending : runTool(call, tools, job, deps, log, emit))),
    );
    usage.toolCalls += calls.filter((c) => !isClient(c)).length;
    addToolUsage(usage, outputs);
    // Toolsets this step loaded: their schemas go with every later request (appended: the prefix holds).
    if (turnTools.note(calls)) toolsJson = toolsJsonNow();
    if (clientNames.size > 0 && calls.some(isClient)) {
      // The client runs its calls; its next request brings their outputs and the step goes on.
      turnMessages.pop();
      for (const output of outputs) files.push(...(output.files ?? []));
      const handed = clientStep(
        assistant,
        calls,
        outputs.map((o) => (o.approval ? HELD_IN_CLIENT_STEP : o.content)),
        isClient,
      );
      return finish(response.message.content ?? "", undefined, handed);
    }
    const held = deps.state.approvals ? outputs.findIndex((o) => o.approval) : -1;
    if (held >= 0 && deps.state.approvals) {
      // The step waits with the request; the answer's turn resumes it.
      const hold = await holdStep(job, deps.state.approvals, assistant, calls, outputs, held);
      turnMessages.pop();
      turnMessages.push(...hold.kept, { role: "assistant", content: hold.prompt });
      for (const output of outputs) files.push(...(output.files ?? []));
      if (job.streamText) emit({ type: "text-delta", turnId: job.turnId, text: hold.prompt });
      return finish(hold.prompt, hold.buttons);
    }
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
