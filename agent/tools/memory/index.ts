/**
 * `memory`: the agent's long-term notes. Two bounded files: `memory` (its notes about the environment,
 * tools and lessons learned) and `user` (who the user is, what they prefer), those of whom the turn acts
 * for (the owners share one pair; every other user has their own). The system prompt shows both as
 * they were when the session started; a write shows up there from the next session on.
 */
import { z } from "zod";
import { callerOfOrigin } from "../../../core/access.js";
import type { MemoryView } from "../../../skills/memory/types.js";
import { defineTool } from "../../tool-registry.js";

const parameters = z.object({
  action: z
    .enum(["add", "replace", "remove"])
    .describe("add a new entry, replace the entry containing old_text, or remove it."),
  // What each file holds is in the tool's description: said once.
  target: z.enum(["memory", "user"]),
  content: z.string().optional().describe("The entry's text (add, replace): one self-contained fact."),
  old_text: z
    .string()
    .optional()
    .describe("replace, remove: a short piece of the existing entry, unique to it, copied exactly."),
});

/** The `memory` tool (toolset "memory"). */
export const memoryTool = defineTool({
  name: "memory",
  description:
    "Save durable knowledge for future sessions: facts about the user (preferences, name, projects) in 'user', and lessons about your environment, tools and what worked in 'memory'. Save what will still matter next week, not task progress. Each file has a character budget; when one is full, consolidate with replace/remove. Never save secrets.",
  parameters,
  toolset: "memory",
  async execute({ action, target, content, old_text: oldText }, ctx) {
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
  },
});

/** `user (3 entries, 412/1,375 chars):` and the numbered entries. */
export function formatView(view: MemoryView): string {
  const name = view.target === "user" ? "user" : "memory";
  const head = `${name} (${view.entries.length} entr${view.entries.length === 1 ? "y" : "ies"}, ${view.usedChars.toLocaleString("en-US")}/${view.limitChars.toLocaleString("en-US")} chars)`;
  if (view.entries.length === 0) return `${head}: empty`;
  return `${head}:\n${view.entries.map((e, i) => `${i + 1}. ${e}`).join("\n")}`;
}
export { memoryStateMethods } from "./state.js";
