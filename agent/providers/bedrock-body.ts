/**
 * The JSON body of a Bedrock Converse request from the session's messages (the chat-completions shape):
 *
 * - leading system messages become the `system` blocks, a later system note a text block of its user
 *   turn; the assistant's calls `toolUse` blocks; tool results `toolResult` blocks of a user turn;
 *   images (data URLs) `image` blocks with their bytes in base64, as Converse's JSON takes a blob;
 * - with the model's `cache_control: true`, a `cachePoint` follows the system blocks and the tools;
 * - reasoning, with the session's reasoning on and the model's `reasoning: true`: a Claude model gets
 *   `additionalModelRequestFields.thinking` (the model's `thinking_budget` or the effort's budget, with
 *   `maxTokens` raised by it, as Anthropic's Messages API wants), an Amazon Nova model
 *   `reasoningConfig.maxReasoningEffort`; other models nothing. An answer's `reasoningContent` blocks
 *   (signed text, or redacted bytes) come back on its message and go first in its turn the next time,
 *   as extended thinking requires across tool calls; another provider's or protocol's are dropped.
 *
 * The body is assembled as a string with each tool's JSON made once, as the other transports do.
 */
import { THINKING_BUDGETS } from "./anthropic-body.js";
import { toolArguments } from "./tool-arguments.js";
import type { ModelMessage, ModelTool, ResolvedModel, TransportRequest } from "./types.js";

/** A Converse content block as Herald sends it (only the fields it uses). */
export type BedrockBlock = Record<string, unknown>;

export interface BedrockTurn {
  role: "user" | "assistant";
  content: BedrockBlock[];
}

/** The Converse system blocks and turns of `messages` (`provider`: whose reasoning goes back). */
export function bedrockMessages(
  messages: readonly ModelMessage[],
  provider: string,
): { system: BedrockBlock[]; messages: BedrockTurn[] } {
  const system: BedrockBlock[] = [];
  const out: BedrockTurn[] = [];
  const add = (role: BedrockTurn["role"], blocks: BedrockBlock[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === "system") {
      if (out.length === 0) system.push({ text: m.content });
      else add("user", [{ text: m.content }]);
    } else if (m.role === "user") {
      add("user", userBlocks(m.content));
    } else if (m.role === "tool") {
      add("user", [
        { toolResult: { toolUseId: m.tool_call_id, content: [{ text: m.content || "(empty)" }] } },
      ]);
    } else {
      const r = m.reasoning;
      const blocks: BedrockBlock[] =
        r?.api === "bedrock" && r.provider === provider
          ? (r.items as BedrockBlock[]).map((item) => ({ reasoningContent: item }))
          : [];
      if (m.content) blocks.push({ text: m.content });
      for (const call of m.tool_calls ?? []) {
        blocks.push({
          toolUse: {
            toolUseId: call.id,
            name: call.function.name,
            input: toolArguments(call.function.arguments),
          },
        });
      }
      add("assistant", blocks.length ? blocks : [{ text: "(no answer)" }]);
    }
  }
  if (out[0]?.role === "assistant")
    out.unshift({ role: "user", content: [{ text: "(earlier in this conversation)" }] });
  return { system, messages: out };
}

const IMAGE_FORMATS = new Set(["png", "jpeg", "gif", "webp"]);

function userBlocks(content: ModelMessage["content"]): BedrockBlock[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  const blocks: BedrockBlock[] = [];
  for (const p of content ?? []) {
    if (typeof p === "string") continue;
    if (p.type === "text" && p.text) blocks.push({ text: p.text });
    else if (p.type === "image_url") {
      const data = /^data:image\/([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
      const format = data?.[1] === "jpg" ? "jpeg" : data?.[1];
      blocks.push(
        data && format && IMAGE_FORMATS.has(format)
          ? { image: { format, source: { bytes: data[2]! } } }
          : { text: `[image: ${p.image_url.url}]` },
      );
    } else if (p.type === "file") {
      // A PDF sent as the file (a fallback's message within a turn): Converse takes document blocks.
      const data = /^data:application\/pdf;base64,(.*)$/s.exec(p.file.file_data ?? "");
      const name = (p.file.filename ?? "document")
        .replace(/\.pdf$/i, "")
        .replace(/[^\w\s()[\]-]+/g, " ")
        .trim();
      blocks.push(
        data
          ? { document: { format: "pdf", name: name || "document", source: { bytes: data[1]! } } }
          : { text: `[file: ${p.file.filename ?? "unnamed"}]` },
      );
    }
  }
  return blocks;
}

/** A tool's `toolSpec` JSON, made once per schema object. */
const toolJson = new WeakMap<object, string>();

function toolText(tool: ModelTool): string {
  let text = toolJson.get(tool);
  if (text === undefined) {
    const fn = tool.type === "function" ? tool.function : undefined;
    text = JSON.stringify({
      toolSpec: {
        name: fn?.name ?? "",
        description: fn?.description || (fn?.name ?? "tool"),
        inputSchema: { json: fn?.parameters ?? { type: "object", properties: {} } },
      },
    });
    toolJson.set(tool, text);
  }
  return text;
}

/** The longest answer when the model declares none and thinking needs `maxTokens` above its budget. */
const DEFAULT_MAX_TOKENS = 8192;

/** What the model is asked to reason with: fields for `additionalModelRequestFields`, tokens to add. */
export function bedrockReasoning(
  target: ResolvedModel,
  request: TransportRequest,
): { fields: Record<string, unknown>; budget: number } | undefined {
  const info = target.info;
  const effort = info?.reasoning ? request.reasoningEffort : undefined;
  if (!effort) return undefined;
  const model = target.model.toLowerCase();
  if (model.includes("anthropic.claude")) {
    const budget = info?.thinkingBudget ?? THINKING_BUDGETS[effort];
    return { fields: { thinking: { type: "enabled", budget_tokens: budget } }, budget };
  }
  if (model.includes("amazon.nova")) {
    return { fields: { reasoningConfig: { type: "enabled", maxReasoningEffort: effort } }, budget: 0 };
  }
  return undefined;
}

/** The JSON body of a ConverseStream request. */
export function bedrockBody(target: ResolvedModel, request: TransportRequest): string {
  const info = target.info;
  const cache = info?.cacheControl === true;
  const { system, messages } = bedrockMessages(request.messages, target.provider.name);
  if (cache && system.length) system.push({ cachePoint: { type: "default" } });
  const reasoning = bedrockReasoning(target, request);
  let head = "{";
  if (system.length) head += `"system":${JSON.stringify(system)},`;
  if (request.tools?.length) {
    const cachePoint = cache ? `,{"cachePoint":{"type":"default"}}` : "";
    head += `"toolConfig":{"tools":[${request.tools.map(toolText).join(",")}${cachePoint}]},`;
  }
  if (reasoning?.budget) {
    const maxTokens = (info?.maxOutputTokens ?? DEFAULT_MAX_TOKENS) + reasoning.budget;
    head += `"inferenceConfig":{"maxTokens":${maxTokens}},`;
  } else if (info?.maxOutputTokens) {
    head += `"inferenceConfig":{"maxTokens":${info.maxOutputTokens}},`;
  }
  if (reasoning) head += `"additionalModelRequestFields":${JSON.stringify(reasoning.fields)},`;
  return `${head}"messages":${JSON.stringify(messages)}}`;
}
