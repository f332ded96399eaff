/**
 * The body of an Anthropic Messages request from the session's messages (the chat-completions shape):
 *
 * - leading system messages become `system` blocks; a system message later in the conversation (the
 *   plan note) becomes a text block of the user turn it sits in, since Messages has no system role there;
 * - tool results become `tool_result` blocks of a user turn, consecutive turns of one role are merged
 *   (the API wants turns to alternate), and a conversation that would start with the assistant opens
 *   with a short user turn;
 * - images (`image_url` parts: data URLs or http URLs) become `image` blocks, PDFs (`file` parts with
 *   a base64 data URL) `document` blocks with a base64 source;
 * - an assistant message's Anthropic reasoning (signed thinking and redacted thinking blocks) of the
 *   same provider goes back first in its turn, as extended thinking requires across tool calls; other
 *   protocols' reasoning is dropped;
 * - prompt caching: `cache_control` breakpoints on the last tool, the last system block, the last block
 *   of the stable prefix (the history before this turn: the next turn reads it from the cache) and the
 *   last block of the request (the next step of this turn reads it), at most the API's four.
 *
 * The body is assembled as a string with each tool's JSON made once, as the chat transport does.
 */

import { toolArguments } from "./tool-arguments.js";
import type { ModelMessage, ModelTool, ReasoningEffort } from "./types.js";

/** A content block as the Messages API takes it (only the fields Herald sends). */
export type AnthropicBlock = Record<string, unknown> & { type: string };

export interface AnthropicTurn {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

/** What a request asks beyond the messages. */
export interface AnthropicBodyOptions {
  model: string;
  /** The provider's name: only its own signed thinking goes back to it. */
  provider: string;
  maxOutputTokens: number;
  /** Extended thinking's budget; undefined: no thinking. */
  thinkingBudget?: number | undefined;
  /** Place cache breakpoints. */
  cache: boolean;
}

const EPHEMERAL = { type: "ephemeral" } as const;

/** The thinking budget of an effort when the model declares none. */
export const THINKING_BUDGETS: Record<ReasoningEffort, number> = { low: 2048, medium: 8192, high: 24_576 };

/** A tool's JSON, plain and with a breakpoint, made once per schema object. */
const toolJson = new WeakMap<object, { plain: string; marked?: string }>();

function toolText(tool: ModelTool, marked: boolean): string {
  let entry = toolJson.get(tool);
  if (!entry) {
    const fn = tool.type === "function" ? tool.function : undefined;
    const plain = JSON.stringify({
      name: fn?.name ?? "",
      description: fn?.description ?? "",
      input_schema: fn?.parameters ?? { type: "object", properties: {} },
    });
    entry = { plain };
    toolJson.set(tool, entry);
  }
  if (!marked) return entry.plain;
  entry.marked ??= `${entry.plain.slice(0, -1)},"cache_control":{"type":"ephemeral"}}`;
  return entry.marked;
}

/** The JSON body of a streaming Messages request. */
export function anthropicBody(
  messages: readonly ModelMessage[],
  tools: readonly ModelTool[] | undefined,
  stableCount: number | undefined,
  options: AnthropicBodyOptions,
): string {
  const { system, turns, stableBlock } = toAnthropicTurns(messages, stableCount, options.provider);
  if (options.cache) {
    for (const block of [system.at(-1), stableBlock, turns.at(-1)?.content.at(-1)]) {
      // Thinking blocks take no breakpoint (and are the stored reasoning itself: never changed here).
      if (block && !block.type.includes("thinking")) block.cache_control = EPHEMERAL;
    }
  }
  let head = `{"model":${JSON.stringify(options.model)},"stream":true`;
  const budget = options.thinkingBudget;
  head += `,"max_tokens":${options.maxOutputTokens + (budget ?? 0)}`;
  if (budget) head += `,"thinking":{"type":"enabled","budget_tokens":${budget}}`;
  if (tools?.length) {
    const last = tools.length - 1;
    head += `,"tools":[${tools.map((t, i) => toolText(t, options.cache && i === last)).join(",")}]`;
  }
  if (system.length) head += `,"system":${JSON.stringify(system)}`;
  return `${head},"messages":${JSON.stringify(turns)}}`;
}

/** The system blocks and turns of `messages`, and the block ending the stable prefix. */
export function toAnthropicTurns(
  messages: readonly ModelMessage[],
  stableCount: number | undefined,
  provider: string,
): { system: AnthropicBlock[]; turns: AnthropicTurn[]; stableBlock: AnthropicBlock | undefined } {
  const system: AnthropicBlock[] = [];
  const turns: AnthropicTurn[] = [];
  let stableBlock: AnthropicBlock | undefined;
  const add = (role: AnthropicTurn["role"], blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  const stableEnd = (stableCount ?? 0) - 1;
  for (const [i, m] of messages.entries()) {
    if (m.role === "system") {
      if (turns.length === 0) system.push({ type: "text", text: m.content });
      else add("user", [{ type: "text", text: m.content }]);
    } else if (m.role === "user") {
      add("user", userBlocks(m.content));
    } else if (m.role === "tool") {
      add("user", [
        { type: "tool_result", tool_use_id: m.tool_call_id, content: m.content || "(no output)" },
      ]);
    } else {
      add("assistant", assistantBlocks(m, provider));
    }
    if (i === stableEnd && turns.length > 0) stableBlock = turns.at(-1)?.content.at(-1);
  }
  if (turns[0]?.role === "assistant") {
    turns.unshift({ role: "user", content: [{ type: "text", text: "(earlier in this conversation)" }] });
  }
  return { system, turns, stableBlock };
}

function userBlocks(content: ModelMessage["content"]): AnthropicBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  const blocks: AnthropicBlock[] = [];
  for (const part of content ?? []) {
    if (typeof part === "string") continue;
    if (part.type === "text") {
      if (part.text) blocks.push({ type: "text", text: part.text });
    } else if (part.type === "image_url") {
      blocks.push({ type: "image", source: imageSource(part.image_url.url) });
    } else if (part.type === "file") {
      const data = /^data:application\/pdf;base64,(.*)$/s.exec(part.file.file_data ?? "");
      blocks.push(
        data
          ? {
              type: "document",
              source: { type: "base64", media_type: "application/pdf", data: data[1]! },
              ...(part.file.filename ? { title: part.file.filename } : {}),
            }
          : { type: "text", text: `[file: ${part.file.filename ?? "unnamed"}]` },
      );
    }
  }
  return blocks;
}

/** `data:image/png;base64,…` → a base64 source; any other URL → a URL source. */
function imageSource(url: string): Record<string, string> {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: "base64", media_type: data[1]!, data: data[2]! };
  return { type: "url", url };
}

function assistantBlocks(
  m: Extract<ModelMessage, { role: "assistant" }>,
  provider: string,
): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  const r = m.reasoning;
  if (r?.api === "anthropic" && r.provider === provider) blocks.push(...(r.items as AnthropicBlock[]));
  if (m.content) blocks.push({ type: "text", text: m.content });
  for (const call of m.tool_calls ?? []) {
    blocks.push({
      type: "tool_use",
      id: call.id,
      name: call.function.name,
      input: toolArguments(call.function.arguments),
    });
  }
  // The API takes no empty turn; a stored empty answer becomes a visible placeholder.
  if (blocks.length === 0) blocks.push({ type: "text", text: "(no answer)" });
  return blocks;
}
