/**
 * The JSON of a Gemini generateContent request from the session's messages (see gemini.ts for the
 * mapping), in two parts: the stable prefix (tool declarations and the system instruction, which an
 * explicit cache entry can stand for) and the rest (generation config, contents). Each tool's
 * declaration is made once per schema object.
 */
import type { Content, Part } from "@google/genai";
import { THINKING_BUDGETS } from "./anthropic-body.js";
import { toolArguments } from "./tool-arguments.js";
import type { ModelMessage, ModelTool, ResolvedModel, TransportRequest } from "./types.js";

/** A tool's declaration as JSON, made once per schema object. */
const declarations = new WeakMap<object, string>();

function declaration(tool: ModelTool): string {
  let d = declarations.get(tool);
  if (d === undefined) {
    const fn = tool.type === "function" ? tool.function : undefined;
    d = JSON.stringify({
      name: fn?.name ?? "",
      description: fn?.description ?? "",
      parametersJsonSchema: fn?.parameters ?? { type: "object", properties: {} },
    });
    declarations.set(tool, d);
  }
  return d;
}

/** The system instruction and contents of `messages` (another protocol's reasoning is dropped). */
export function geminiContents(
  messages: readonly ModelMessage[],
  provider: string,
): { system: Part[]; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  const names = new Map<string, string>();
  const add = (role: "user" | "model", parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts!.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    if (m.role === "system") {
      if (contents.length === 0) system.push({ text: m.content });
      else add("user", [{ text: m.content }]);
    } else if (m.role === "user") {
      add("user", userParts(m.content));
    } else if (m.role === "tool") {
      const name = names.get(m.tool_call_id) ?? "tool";
      add("user", [{ functionResponse: { id: m.tool_call_id, name, response: { result: m.content } } }]);
    } else {
      const r = m.reasoning;
      const signatures =
        r?.api === "gemini" && r.provider === provider
          ? (r.items as { id: string; signature: string }[])
          : [];
      const parts: Part[] = m.content ? [{ text: m.content }] : [];
      for (const call of m.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        const signature = signatures.find((s) => s.id === call.id)?.signature;
        parts.push({
          functionCall: { name: call.function.name, args: toolArguments(call.function.arguments) },
          ...(signature ? { thoughtSignature: signature } : {}),
        });
      }
      add("model", parts.length ? parts : [{ text: "(no answer)" }]);
    }
  }
  if (contents[0]?.role === "model")
    contents.unshift({ role: "user", parts: [{ text: "(earlier in this conversation)" }] });
  return { system, contents };
}

function userParts(content: ModelMessage["content"]): Part[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  const parts: Part[] = [];
  for (const p of content ?? []) {
    if (typeof p === "string") continue;
    if (p.type === "text" && p.text) parts.push({ text: p.text });
    else if (p.type === "image_url") {
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
      parts.push(
        data
          ? { inlineData: { mimeType: data[1]!, data: data[2]! } }
          : { text: `[image: ${p.image_url.url}]` },
      );
    } else if (p.type === "file") {
      // A PDF sent as the file (a fallback's message within a turn): Gemini reads PDFs inline.
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(p.file.file_data ?? "");
      parts.push(
        data
          ? { inlineData: { mimeType: data[1]!, data: data[2]! } }
          : { text: `[file: ${p.file.filename ?? "unnamed"}]` },
      );
    }
  }
  return parts;
}

/**
 * The JSON of a streamGenerateContent request in two parts: the stable prefix (the tools and the
 * system instruction, as members without braces; empty when there are none) and the rest.
 */
export function geminiRequest(
  target: ResolvedModel,
  request: TransportRequest,
): { prefix: string; rest: string } {
  const info = target.info;
  const effort = info?.reasoning ? request.reasoningEffort : undefined;
  const { system, contents } = geminiContents(request.messages, target.provider.name);
  const generation = {
    ...(effort
      ? { thinkingConfig: { thinkingBudget: info?.thinkingBudget ?? THINKING_BUDGETS[effort] } }
      : {}),
    ...(info?.maxOutputTokens ? { maxOutputTokens: info.maxOutputTokens } : {}),
  };
  const prefix: string[] = [];
  if (request.tools?.length)
    prefix.push(`"tools":[{"functionDeclarations":[${request.tools.map(declaration).join(",")}]}]`);
  if (system.length) prefix.push(`"systemInstruction":${JSON.stringify({ parts: system })}`);
  let rest = "";
  if (effort || info?.maxOutputTokens) rest += `"generationConfig":${JSON.stringify(generation)},`;
  return { prefix: prefix.join(","), rest: `${rest}"contents":${JSON.stringify(contents)}` };
}

/** The JSON body of a request: with `cachedContent` the named entry stands for the prefix. */
export function geminiBody(parts: { prefix: string; rest: string }, cachedContent?: string): string {
  const { prefix, rest } = parts;
  if (cachedContent) return `{"cachedContent":${JSON.stringify(cachedContent)},${rest}}`;
  return prefix ? `{${prefix},${rest}}` : `{${rest}}`;
}
