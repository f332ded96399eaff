/** The `todo` tool's declaration; its implementation (`impl.ts`) loads on its first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";
import { MAX_TODO_ITEMS } from "./store.js";

const status = z.enum(["pending", "in_progress", "done", "cancelled"]);

/** `todo`'s arguments. */
export const todoParameters = z.object({
  action: z.enum(["add", "update", "list", "clear"]),
  items: z
    .array(z.string().trim().min(1).max(1000))
    .max(MAX_TODO_ITEMS)
    .optional()
    .describe("add: the steps to append, in order."),
  id: z.number().int().positive().optional().describe("update: the step's number."),
  status: status.optional().describe("update: the step's new status."),
  text: z.string().trim().min(1).max(1000).optional().describe("update: the step's new wording."),
});

/** The `todo` tool (toolset "core"). */
export const todoTool = declareTool({
  name: "todo",
  description:
    "Your plan for a task of several steps, kept for this conversation (it outlasts long histories and restarts; the user sees it with /todo). add: append steps; update: set one step's status (pending, in_progress, done, cancelled) or text; list: show it; clear: empty it. Keep one step in_progress at a time.",
  parameters: todoParameters,
  toolset: "core",
  label: (args) => `📋 todo ${args.action}${args.id !== undefined ? ` ${args.id}` : ""}`,
  implementation: () => import("./impl.js").then((m) => m.runTodo),
});
