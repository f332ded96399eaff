/**
 * Context compression. When the history plus this turn's input nears the model's context window, the
 * head (leading system messages and the first exchange) and the recent tail stay verbatim and
 * everything between is replaced by one summary the model writes. A tool-calls message and its tool
 * results always stay on the same side of a cut.
 *
 * Token counts are estimates: characters / 4 plus a few tokens per message. That is rough (code and
 * non-Latin text run denser) but needs no tokenizer per model; the 75% threshold leaves room for the error.
 */
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { isAbortError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Compaction, HistoryItem } from "../core/turn.js";
import type { ChatMessage } from "../core/types.js";
import type { ModelClient, ModelMessage } from "./model-client.js";

/** Compress when the estimate exceeds this share of the context. */
export const COMPRESS_AT_RATIO = 0.75;
/** The verbatim tail keeps about this share of the context. */
export const TAIL_RATIO = 0.3;
/** The head (first exchange) is kept only when it fits in this share. */
const HEAD_RATIO = 0.15;
/** Images are counted as this many tokens each (providers charge roughly this for a detail:auto image). */
const IMAGE_TOKENS = 1000;
const PER_MESSAGE_TOKENS = 4;

export const SUMMARY_PREFIX = "[Summary of the earlier part of this conversation]";

const SUMMARY_INSTRUCTION =
  "Summarise this conversation for continuing it: facts, decisions, open tasks, names, numbers and preferences the user gave, what tools found, and what the assistant was in the middle of. When user messages start with a name in brackets ([Alice]), several people share the conversation and the tag names the sender: say who said, asked or decided what. Plain text, at most about 300 words; no preamble.";

/** Estimated tokens of one message (chars / 4, see the file comment). */
export function estimateMessageTokens(message: ModelMessage): number {
  let chars = 0;
  let extra = PER_MESSAGE_TOKENS;
  const content = message.content;
  if (typeof content === "string") chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === "text") chars += part.text.length;
      else extra += IMAGE_TOKENS;
    }
  }
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? [])
      chars += call.function.name.length + call.function.arguments.length;
  }
  return Math.ceil(chars / 4) + extra;
}

/** Estimated tokens of messages. */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  return messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
}

/**
 * Where the cuts go. `leading` are the leading system messages (an earlier compaction's summary among
 * them); the summary replaces leading, head and middle, so it covers everything up to the middle's end.
 */
export interface CompressionPlan {
  leading: HistoryItem[];
  head: HistoryItem[];
  middle: HistoryItem[];
  tail: HistoryItem[];
}

/**
 * Splits `history` into leading system messages, head, middle (to summarise) and tail, or returns
 * undefined when there is nothing worth summarising.
 */
export function planCompression(
  history: readonly HistoryItem[],
  contextTokens: number,
): CompressionPlan | undefined {
  let lead = 0;
  while (history[lead]?.message.role === "system") lead++;
  const leading = history.slice(0, lead);
  const rest = history.slice(lead);
  const messages = rest.map((h) => h.message);

  // Head: the first exchange, up to and including the first assistant answer without tool calls.
  let headEnd = messages.findIndex((m) => m.role === "assistant" && !m.tool_calls?.length) + 1;
  const headBudget = contextTokens * HEAD_RATIO;
  if (headEnd <= 0 || estimateTokens(messages.slice(0, headEnd)) > headBudget) {
    headEnd = messages[0]?.role === "user" && estimateMessageTokens(messages[0]) <= headBudget ? 1 : 0;
  }

  // Tail: the newest messages within the tail budget.
  const tailBudget = contextTokens * TAIL_RATIO;
  let tailStart = messages.length;
  let tailTokens = 0;
  while (tailStart > headEnd) {
    const tokens = estimateMessageTokens(messages[tailStart - 1]!);
    if (tailTokens + tokens > tailBudget) break;
    tailTokens += tokens;
    tailStart--;
  }
  // Never start the tail with tool results: their tool-calls message would be summarised away.
  while (messages[tailStart]?.role === "tool") tailStart++;

  const middle = rest.slice(headEnd, tailStart);
  if (middle.length === 0) return undefined;
  return { leading, head: rest.slice(0, headEnd), middle, tail: rest.slice(tailStart) };
}

export interface CompressOptions {
  systemPrompt: string;
  history: HistoryItem[];
  /** This turn's user message as sent to the model (a resumed turn: its first step's messages). */
  input: ModelMessage | readonly ModelMessage[];
  tools?: ChatCompletionTool[] | undefined;
  client: ModelClient;
  /** Model for the summary call (`auxiliary.compression`). @defaultValue the client's default model */
  model?: string | undefined;
  /** The model the turn runs on, whose context window counts. @defaultValue `model` */
  contextModel?: string | undefined;
  /** Compress even below the threshold (the model answered that the context is too long). */
  force?: boolean | undefined;
  signal: AbortSignal;
  logger: Logger;
}

export interface CompressResult {
  /** The history to send (the stored one when no compression was needed). */
  history: ChatMessage[];
  /** Set when a summary replaced messages; the gateway persists it. */
  compaction?: Compaction | undefined;
  usage?: { promptTokens: number; completionTokens: number; cachedTokens: number } | undefined;
  /** The model that wrote the summary. */
  model?: string | undefined;
}

/**
 * Compresses `history` when history + input + system prompt + tools exceed ~75% of the context.
 * The summary covers head and middle (so the persisted compaction, which replaces a leading run of
 * messages, loses nothing); this turn still sees the head verbatim.
 * @throws the cancelled error on abort. A failed summary call does not throw: the middle is left out
 * with a note and no compaction is returned (the next turn tries again).
 */
// Tool definitions are built once and reused (tool-registry caches them), so their size is too.
const toolChars = new WeakMap<object, number>();

function toolsChars(tools: readonly object[]): number {
  let chars = 0;
  for (const tool of tools) {
    let n = toolChars.get(tool);
    if (n === undefined) {
      n = JSON.stringify(tool).length;
      toolChars.set(tool, n);
    }
    chars += n;
  }
  return chars;
}

function inputs(input: CompressOptions["input"]): readonly ModelMessage[] {
  return Array.isArray(input) ? (input as readonly ModelMessage[]) : [input as ModelMessage];
}

export async function compressIfNeeded(options: CompressOptions): Promise<CompressResult> {
  const { history, client, logger } = options;
  const contextModel = options.contextModel ?? options.model ?? client.catalog.defaultModel;
  const declared = client.catalog.contextTokens(contextModel);
  const stored = history.map((h) => h.message);
  const total =
    Math.ceil(options.systemPrompt.length / 4) +
    estimateTokens(stored) +
    inputs(options.input).reduce((sum, m) => sum + estimateMessageTokens(m), 0) +
    Math.ceil(toolsChars(options.tools ?? []) / 4);
  if (!options.force && total <= declared * COMPRESS_AT_RATIO) return { history: stored };
  // Forced after the model refused the request as too long: its real window is smaller than this
  // request, whatever config declares, so plan for two thirds of what was sent.
  const contextTokens = options.force ? Math.floor(Math.min(declared, total) * 0.66) : declared;
  const plan = planCompression(history, contextTokens);
  if (!plan) return { history: stored };

  // The summary replaces everything up to the middle's last message, earlier summaries included, so its
  // input is all of that: what an earlier compaction summarised is carried into the new summary.
  const replaced = [...plan.leading, ...plan.head, ...plan.middle].map((h) => h.message);
  const uptoSeq = plan.middle[plan.middle.length - 1]!.seq;
  const verbatim = (items: HistoryItem[]) => items.map((h) => h.message);
  const transcript = renderTranscript(replaced, Math.floor(contextTokens * 0.5 * 4));
  try {
    const result = await client.streamChat({
      model: options.model,
      messages: [
        { role: "system", content: "You write faithful, compact summaries of conversations." },
        { role: "user", content: `${SUMMARY_INSTRUCTION}\n\n<conversation>\n${transcript}\n</conversation>` },
      ],
      signal: options.signal,
    });
    const summary = (result.message.content ?? "").trim();
    if (!summary) throw new Error("the model returned an empty summary");
    logger.info(
      { replaced: replaced.length, kept: plan.tail.length, estimatedTokens: total },
      "context compressed",
    );
    return {
      history: [
        ...verbatim(plan.leading),
        ...verbatim(plan.head),
        summaryMessage(summary),
        ...verbatim(plan.tail),
      ],
      compaction: { uptoSeq, summary },
      usage: result.usage,
      model: result.model,
    };
  } catch (err) {
    if (isAbortError(err) || options.signal.aborted) throw err;
    logger.warn(
      { err: String(err), replaced: plan.middle.length },
      "context summary failed; leaving the middle out",
    );
    const note: ChatMessage = {
      role: "user",
      content: `[${plan.middle.length} earlier messages of this conversation were left out to fit the model's context.]`,
    };
    return { history: [...verbatim(plan.leading), ...verbatim(plan.head), note, ...verbatim(plan.tail)] };
  }
}

/** The message that stands for the summarised part in this turn. */
export function summaryMessage(summary: string): ChatMessage {
  return { role: "user", content: `${SUMMARY_PREFIX}\n${summary}` };
}

/**
 * A plain-text transcript. Each message is cut to its share of `maxChars` (at least 200, at most 2,000
 * chars) so old and new parts both reach the summary; if still too long, the oldest part is dropped.
 */
function renderTranscript(messages: readonly ChatMessage[], maxChars: number): string {
  const share = Math.min(2000, Math.max(200, Math.floor(maxChars / Math.max(1, messages.length))));
  const cut = (s: string, n = share) => (s.length > n ? `${s.slice(0, n)} […]` : s);
  const lines = messages.map((m) => {
    if (m.role === "tool") return `tool result: ${cut(m.content)}`;
    if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map(
        (c) => `assistant called ${c.function.name}(${cut(c.function.arguments, 300)})`,
      );
      return [m.content ? `assistant: ${cut(m.content)}` : "", ...calls].filter(Boolean).join("\n");
    }
    return `${m.role}: ${cut(m.content)}`;
  });
  const text = lines.join("\n");
  return text.length > maxChars ? `[…]\n${text.slice(text.length - maxChars)}` : text;
}

/**
 * Drops tool messages whose tool-calls message is missing and tool calls whose results are missing
 * (a turn that failed half-way), so the endpoint does not reject the history.
 */
export function repairToolPairs(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "tool") continue; // kept only through their tool-calls message below
    if (m.role !== "assistant" || !m.tool_calls?.length) {
      out.push(m);
      continue;
    }
    const results: Extract<ChatMessage, { role: "tool" }>[] = [];
    let j = i + 1;
    while (messages[j]?.role === "tool")
      results.push(messages[j++] as Extract<ChatMessage, { role: "tool" }>);
    const answered = new Set(results.map((r) => r.tool_call_id));
    const calls = m.tool_calls.filter((c) => answered.has(c.id));
    const ids = new Set(calls.map((c) => c.id));
    if (calls.length > 0)
      out.push({ ...m, tool_calls: calls }, ...results.filter((r) => ids.has(r.tool_call_id)));
    else if (m.content) out.push({ role: "assistant", content: m.content });
    i = j - 1;
  }
  return out;
}

/** `compressNow` summarises at least this many messages, or nothing. */
const MIN_REPLACED = 4;

export interface CompressNowOptions {
  history: HistoryItem[];
  client: ModelClient;
  /** Model for the summary call. @defaultValue the client's configured model */
  model?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface CompressNowResult {
  compaction: Compaction;
  /** Estimated tokens of the history before and after (the summary plus what stays verbatim). */
  beforeTokens: number;
  afterTokens: number;
  /** Messages the summary replaced (earlier summaries included). */
  replaced: number;
  usage: { promptTokens: number; completionTokens: number };
}

/**
 * Compacts `history` now, whatever its size (`/compress`): the cuts are planned as if the context were
 * the history's own size, so about the newest 30% stays verbatim and the rest is summarised.
 * @returns undefined when there is too little to summarise (fewer than 4 messages, or a summary no
 * shorter than what it would replace).
 * @throws when the summary call fails or returns nothing (nothing is compacted then).
 */
export async function compressNow(options: CompressNowOptions): Promise<CompressNowResult | undefined> {
  const { history, client } = options;
  const beforeTokens = estimateTokens(history.map((h) => h.message));
  const plan = planCompression(history, Math.min(client.config.contextTokens, beforeTokens));
  if (!plan) return undefined;
  const replaced = [...plan.leading, ...plan.head, ...plan.middle].map((h) => h.message);
  // A summary of a message or two is no shorter than they are.
  if (replaced.length < MIN_REPLACED) return undefined;
  const transcript = renderTranscript(replaced, Math.floor(client.config.contextTokens * 0.5 * 4));
  const result = await client.streamChat({
    model: options.model,
    messages: [
      { role: "system", content: "You write faithful, compact summaries of conversations." },
      { role: "user", content: `${SUMMARY_INSTRUCTION}\n\n<conversation>\n${transcript}\n</conversation>` },
    ],
    signal: options.signal,
  });
  const summary = (result.message.content ?? "").trim();
  if (!summary) throw new Error("the model returned an empty summary");
  const uptoSeq = plan.middle[plan.middle.length - 1]!.seq;
  // What the next turn's history is: the summary as a system message, then the tail (load() shows it so).
  const afterTokens =
    estimateMessageTokens({ role: "system", content: `Summary of the earlier conversation:\n${summary}` }) +
    estimateTokens(plan.tail.map((h) => h.message));
  if (afterTokens >= beforeTokens) return undefined;
  return {
    compaction: { uptoSeq, summary },
    beforeTokens,
    afterTokens,
    replaced: replaced.length,
    usage: result.usage,
  };
}
