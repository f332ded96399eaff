/** What `memory` does (`declaration.ts` declares it). */
import { callerOfOrigin } from "../../../core/access.js";
import type { MemoryView } from "../../../skills/memory/types.js";
import type { ToolRun } from "../../tool-declaration.js";
import type { memoryParameters } from "./declaration.js";

/** Runs one `memory` call. */
export const runMemory: ToolRun<typeof memoryParameters> = async (
  { action, target, content, old_text: oldText },
  ctx,
) => {
  const memory = ctx.state.memory;
  if (!memory) return { content: "error: memory is not available here.", isError: true };
  const needs = (value: string | undefined, name: string) =>
    value?.trim() ? undefined : `error: ${action} needs ${name}.`;
  const missing =
    action === "add"
      ? needs(content, "content")
      : action === "replace"
        ? (needs(oldText, "old_text") ?? needs(content, "content"))
        : needs(oldText, "old_text");
  if (missing) return { content: missing, isError: true };
  ctx.progress(
    `${action === "add" ? "saving to" : "updating"} ${target === "user" ? "the user profile" : "memory"}`,
  );
  const caller = callerOfOrigin(ctx.origin);
  const result =
    action === "add"
      ? await memory.add(target, content!, caller)
      : action === "replace"
        ? await memory.replace(target, oldText!, content!, caller)
        : await memory.remove(target, oldText!, caller);
  if (!result.ok) {
    const entries = result.view ? `\n\n${formatView(result.view)}` : "";
    return { content: `error: ${result.error}${entries}`, isError: true };
  }
  return `${result.message} It will be in your prompt from the next session on.\n\n${formatView(result.view)}`;
};

/** `user (3 entries, 412/1,375 chars):` and the numbered entries. */
export function formatView(view: MemoryView): string {
  const name = view.target === "user" ? "user" : "memory";
  const head = `${name} (${view.entries.length} entr${view.entries.length === 1 ? "y" : "ies"}, ${view.usedChars.toLocaleString("en-US")}/${view.limitChars.toLocaleString("en-US")} chars)`;
  if (view.entries.length === 0) return `${head}: empty`;
  return `${head}:\n${view.entries.map((e, i) => `${i + 1}. ${e}`).join("\n")}`;
}
