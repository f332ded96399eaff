/**
 * `delegate_task`: hands tasks to child agents that run as jobs on the queue (on Redis, on any worker),
 * each with a fresh context (only the goal and the context passed), at most the parent's toolsets and
 * a step and time budget. The gateway keeps the children (`StateClient.delegate`); this tool starts them,
 * shows their states on the chat's progress line while it waits, and answers with every task's result
 * in task order. Aborting the turn (/stop) cancels the children.
 */
import { z } from "zod";
import { cancelledError } from "../model-errors.js";
import { defineTool } from "../tool-registry.js";
import type { ToolContext } from "../types.js";
import type { DelegateChild, DelegateGroup } from "./state.js";

const parameters = z.object({
  tasks: z
    .array(
      z.object({
        goal: z.string().trim().min(1).max(20_000).describe("What the child must do, on its own."),
        context: z
          .string()
          .max(100_000)
          .optional()
          .describe("Everything the child needs to know: it sees nothing else of this conversation."),
        toolsets: z
          .array(z.string())
          .optional()
          .describe("Toolsets the child may use (a subset of yours; default: yours)."),
      }),
    )
    .min(1)
    .max(20),
  max_parallel: z.number().int().positive().max(20).optional().describe("Children running at once."),
});

/** How long one wait for news asks the gateway to hold (under the state API's 30 s timeout). */
const WAIT_MS = 20_000;

const ICON: Record<DelegateChild["state"], string> = {
  waiting: "💤",
  running: "⏳",
  done: "✅",
  failed: "❌",
  cancelled: "⏹",
};

/** The progress line: `🧩 subtasks: ✅ 1 ⏳ 2 💤 0` plus each child's icon in order. */
export function progressLine(group: DelegateGroup): string {
  const icons = group.children.map((c) => ICON[c.state]).join("");
  const done = group.children.filter((c) => c.state === "done").length;
  return `🧩 subtasks ${done}/${group.children.length} done ${icons}`;
}

/** The longest summary of one child the parent reads (20 tasks must not flood its context). */
const MAX_SUMMARY_CHARS = 8_000;

const cut = (text: string) =>
  text.length > MAX_SUMMARY_CHARS
    ? `${text.slice(0, MAX_SUMMARY_CHARS)}\n[… ${text.length - MAX_SUMMARY_CHARS} more characters cut]`
    : text;

/** The tool's answer: every task in order with its state, summary (cut at 8,000 characters) and files. */
export function formatResults(group: DelegateGroup): string {
  return group.children
    .map((c) =>
      [
        `## Task ${c.index}: ${c.state}`,
        `goal: ${c.goal.slice(0, 300)}`,
        cut(c.summary ?? "(no answer)"),
        ...(c.files?.length ? [`files: ${c.files.map((f) => f.path).join(", ")}`] : []),
      ].join("\n"),
    )
    .join("\n\n");
}

const final = (c: DelegateChild) => c.state === "done" || c.state === "failed" || c.state === "cancelled";

/** Waits for news or the turn's abort (which cancels the children). */
async function waitFor(ctx: ToolContext, group: DelegateGroup): Promise<DelegateGroup> {
  const api = ctx.state.delegate!;
  if (ctx.signal.aborted) throw cancelledError(ctx.signal.reason);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(cancelledError(ctx.signal.reason));
    ctx.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([api.wait(group.id, group.version, WAIT_MS), aborted]);
  } finally {
    // One listener per wait, removed after it: a long fan-out waits many times on one signal.
    if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** The `delegate_task` tool (toolset "delegate"). */
export const delegateTool = defineTool({
  name: "delegate_task",
  description:
    "Hand independent tasks to sub-agents that work in parallel, each with a fresh context: give every task a self-contained goal and the context it needs (they see nothing of this conversation). You get each task's summary (and files) back in task order. Use it for work that splits into parts; do small things yourself.",
  parameters,
  toolset: "delegate",
  label: (args) => `🧩 delegate_task: ${args.tasks?.length ?? 0} tasks`,
  async execute(args, ctx) {
    const api = ctx.state.delegate;
    if (!api || !ctx.turnId || !ctx.callId)
      return { content: "error: delegation is not available here.", isError: true };
    const turn = ctx.turn ?? { toolsets: [], depth: 0 };
    let group = await api.start(
      {
        turnId: ctx.turnId,
        callId: ctx.callId,
        origin: ctx.origin,
        toolsets: turn.toolsets,
        depth: turn.depth,
        ...(turn.model ? { model: turn.model } : {}),
      },
      args.tasks,
      args.max_parallel,
    );
    ctx.progress(progressLine(group));
    const waitAll = async () => {
      while (!group.children.every(final)) {
        const next = await waitFor(ctx, group);
        if (next.version !== group.version) ctx.progress(progressLine(next));
        group = next;
      }
    };
    try {
      // The whole wait lends this turn's job slot (both queues): the children run even when waiting
      // parents fill every slot of every worker. One lend for the whole wait, not one per long-poll.
      await (ctx.idle ? ctx.idle(waitAll()) : waitAll());
    } catch (err) {
      if (ctx.signal.aborted) await api.cancel(group.id).catch(() => undefined);
      throw err;
    }
    return formatResults(group);
  },
});
