/**
 * The Messages API's rules and wire objects as the fake applies them: what the real API refuses with a
 * 400 (turns out of order, a tool result without its call, thinking blocks missing or altered in a tool
 * loop, more than four cache breakpoints, empty text), its prompt cache (prefixes up to each
 * `cache_control` breakpoint, looked up up to 20 blocks back), and the streamed events of an answer.
 */
import { createHash, createHmac } from "node:crypto";
import type {
  FakeAnthropicBlock,
  FakeAnthropicRequest,
  FakeAnthropicStep,
  FakeAnthropicUsage,
} from "./types.js";

const SIGNING_KEY = "fake-anthropic-thinking";

/** The signature the fake gives a thinking text (the real API's is opaque; this one can be checked). */
export function signThinking(thinking: string): string {
  return createHmac("sha256", SIGNING_KEY).update(thinking).digest("base64");
}

function blocksOf(content: string | FakeAnthropicBlock[]): FakeAnthropicBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** Why the real API would refuse this body (400 invalid_request_error), or undefined. */
export function invalidReason(body: FakeAnthropicRequest): string | undefined {
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "messages: at least one message is required";
  if (body.messages[0]?.role !== "user") return 'messages: first message must use the "user" role';
  const thinking = body.thinking?.type === "enabled";
  if (thinking) {
    const budget = body.thinking?.budget_tokens ?? 0;
    if (budget < 1024) return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (budget >= body.max_tokens) return "`max_tokens` must be greater than `thinking.budget_tokens`";
  }
  let breakpoints = 0;
  const count = (b: { cache_control?: unknown }) => {
    if (b.cache_control) breakpoints++;
  };
  for (const t of body.tools ?? []) count(t);
  if (Array.isArray(body.system)) for (const b of body.system) count(b);
  let previous: { role: string; blocks: FakeAnthropicBlock[] } | undefined;
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== "user" && m.role !== "assistant")
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks = blocksOf(m.content);
    for (const [j, b] of blocks.entries()) {
      count(b);
      if (b.type === "text" && !b.text)
        return `messages.${i}.content.${j}.text: text content blocks must be non-empty`;
      if (b.type.includes("thinking") && b.cache_control)
        return `messages.${i}.content.${j}: thinking blocks cannot be cached`;
      if (b.type === "document") {
        const pdf = b.source?.type === "base64" && b.source.media_type === "application/pdf";
        if (
          !pdf ||
          !Buffer.from(b.source?.data ?? "", "base64")
            .subarray(0, 5)
            .equals(Buffer.from("%PDF-"))
        )
          return `messages.${i}.content.${j}.pdf.source.base64.data: The PDF specified was not valid.`;
        if (m.role !== "user")
          return `messages.${i}.content.${j}: document blocks are only allowed in user turns`;
      }
      if (b.type === "thinking" && b.signature !== signThinking(b.thinking ?? "")) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (b.type === "tool_result") {
        const asked =
          previous?.role === "assistant" &&
          previous.blocks.some((p) => p.type === "tool_use" && p.id === b.tool_use_id);
        if (!asked)
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    if (previous?.role === "assistant" && previous.blocks.some((p) => p.type === "tool_use")) {
      const ids = previous.blocks.filter((p) => p.type === "tool_use").map((p) => p.id);
      const answered = blocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
      if (ids.some((id) => !answered.includes(id)))
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after`;
    }
    previous = { role: m.role, blocks };
  }
  if (breakpoints > 4)
    return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  if (thinking) {
    // In a tool loop (the last user turn answers tool calls) the assistant turn before it must open
    // with its thinking block, as the API returned it.
    const last = body.messages.at(-1);
    const before = body.messages.at(-2);
    const loop = last && blocksOf(last.content).some((b) => b.type === "tool_result");
    if (loop && before && !blocksOf(before.content)[0]?.type.includes("thinking")) {
      return "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.";
    }
  }
  return undefined;
}

/** Each block of the prompt in cache order (tools, system, messages) as canonical JSON, breakpoints apart. */
function promptBlocks(body: FakeAnthropicRequest): { text: string; breakpoint: boolean }[] {
  const out: { text: string; breakpoint: boolean }[] = [];
  const push = (value: { cache_control?: unknown }, role = "") => {
    const { cache_control, ...rest } = value;
    out.push({ text: role + JSON.stringify(rest), breakpoint: Boolean(cache_control) });
  };
  for (const t of body.tools ?? []) push(t);
  if (typeof body.system === "string") push({ type: "text", text: body.system } as FakeAnthropicBlock);
  else for (const b of body.system ?? []) push(b);
  for (const m of body.messages) for (const b of blocksOf(m.content)) push(b, `${m.role}:`);
  return out;
}

/** The fake's prompt cache: hashes of prefixes written at breakpoints. */
export class PromptCache {
  readonly #entries = new Set<string>();

  /** Reads and writes the cache for one request; returns its input usage (tokens: chars / 4). */
  use(
    body: FakeAnthropicRequest,
  ): Pick<FakeAnthropicUsage, "input_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens"> {
    const blocks = promptBlocks(body);
    const hashes: string[] = [];
    const chars: number[] = [];
    const hash = createHash("sha256");
    let total = 0;
    for (const b of blocks) {
      hash.update(b.text);
      hashes.push(hash.copy().digest("hex"));
      total += b.text.length;
      chars.push(total);
    }
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let readUpTo = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - 20); i--) {
        if (this.#entries.has(hashes[i]!)) {
          readUpTo = Math.max(readUpTo, i);
          break;
        }
      }
    }
    const lastBreakpoint = breakpoints.at(-1) ?? -1;
    for (const bp of breakpoints) this.#entries.add(hashes[bp]!);
    const tokens = (n: number) => Math.ceil(n / 4);
    const read = readUpTo >= 0 ? tokens(chars[readUpTo]!) : 0;
    const written = lastBreakpoint > readUpTo ? tokens(chars[lastBreakpoint]!) - read : 0;
    return {
      input_tokens: Math.max(0, tokens(total) - read - written),
      cache_read_input_tokens: read,
      cache_creation_input_tokens: written,
    };
  }
}

/** Splits `text` into up to `pieces` non-empty parts. */
function split(text: string, pieces: number): string[] {
  if (text.length <= pieces) return text ? [text] : [];
  const size = Math.ceil(text.length / pieces);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The content blocks of an answer, with ids given. */
export function answerBlocks(
  step: FakeAnthropicStep,
  thinking: boolean,
  nextId: () => string,
): FakeAnthropicBlock[] {
  const blocks: FakeAnthropicBlock[] = [];
  if (thinking && step.thinking)
    blocks.push({ type: "thinking", thinking: step.thinking, signature: signThinking(step.thinking) });
  if (step.text) blocks.push({ type: "text", text: step.text });
  for (const call of step.toolCalls ?? [])
    blocks.push({ type: "tool_use", id: call.id ?? nextId(), name: call.name, input: call.arguments });
  return blocks;
}

/** The SSE events of a streamed answer (`event:` name and `data:` JSON, as the API sends them). */
export function answerEvents(
  id: string,
  model: string,
  blocks: FakeAnthropicBlock[],
  stopReason: string,
  usage: FakeAnthropicUsage,
  step: FakeAnthropicStep,
): string[] {
  const ev = (data: { type: string }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const pieces = step.pieces ?? 3;
  const { output_tokens, ...input } = usage;
  const out = [
    ev({
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...input, output_tokens: 1 },
      },
    } as { type: string }),
    ev({ type: "ping" }),
  ];
  for (const [index, b] of blocks.entries()) {
    if (b.type === "text") {
      out.push(
        ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } } as {
          type: string;
        }),
      );
      for (const [n, text] of split(b.text ?? "", pieces).entries()) {
        out.push(
          ev({ type: "content_block_delta", index, delta: { type: "text_delta", text } } as { type: string }),
        );
        if (n === 0 && step.streamError) {
          out.push(ev({ type: "error", error: step.streamError } as { type: string }));
          return out;
        }
      }
    } else if (b.type === "thinking") {
      out.push(
        ev({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        } as { type: string }),
      );
      for (const thinking of split(b.thinking ?? "", pieces)) {
        out.push(
          ev({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } } as {
            type: string;
          }),
        );
      }
      out.push(
        ev({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: b.signature },
        } as { type: string }),
      );
    } else {
      out.push(
        ev({
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
        } as { type: string }),
      );
      const json = JSON.stringify(b.input);
      for (const partial_json of ["", ...split(json, pieces)]) {
        out.push(
          ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } } as {
            type: string;
          }),
        );
      }
    }
    out.push(ev({ type: "content_block_stop", index } as { type: string }));
  }
  const thinkingChars = blocks.reduce((n, b) => n + (b.thinking?.length ?? 0), 0);
  const details = thinkingChars
    ? { output_tokens_details: { thinking_tokens: Math.ceil(thinkingChars / 4) } }
    : {};
  out.push(
    ev({
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens, ...details },
    } as { type: string }),
  );
  out.push(ev({ type: "message_stop" }));
  return out;
}
