/**
 * The hand-over around a worker's turns: the turn's workspace is pulled before the turn runs and
 * pushed after it, whatever its outcome (a cancelled or failed turn's files stay as they would on one
 * machine). A turn that called no tool changed no file and pushes nothing. A pull that fails fails
 * the turn with a message saying so, rather than running it on files it does not have.
 */
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { JobHandler, TurnJob, TurnResult } from "../../../core/turn.js";
import { ownerOf } from "../attachments.js";
import type { Workspace } from "../types.js";
import type { WorkspaceManager } from "../workspaces.js";
import type { WorkspaceHandover } from "./sync.js";

/** Whether the turn called any tool (only tools write files). */
function calledTools(result: TurnResult | undefined): boolean {
  if (!result) return true;
  if (result.kind !== "ok") return true;
  return result.messages.some((m) => m.role === "tool");
}

/** `handler` with the turn's workspace pulled before and pushed after; see the module comment. */
export function withHandover(
  handler: JobHandler,
  deps: { handover: WorkspaceHandover; workspaces: WorkspaceManager; logger: Logger },
): JobHandler {
  return async (job: TurnJob, ctx) => {
    let workspace: Workspace;
    try {
      workspace = deps.workspaces.workspaceFor(ownerOf(job.origin));
      const pulled = await deps.handover.pull(workspace, ctx.signal);
      if (pulled.pulled)
        deps.logger.info(
          { turnId: job.turnId, generation: pulled.generation, files: pulled.files, bytes: pulled.bytes },
          "workspace pulled from the gateway",
        );
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      deps.logger.error({ turnId: job.turnId, err: describeError(err) }, "workspace pull failed");
      return pullFailed(job, err);
    }
    let result: TurnResult | undefined;
    try {
      result = await handler(job, ctx);
      return result;
    } finally {
      if (calledTools(result)) await deps.handover.push(workspace);
      else deps.handover.release(workspace);
    }
  };
}

function pullFailed(job: TurnJob, err: unknown): TurnResult {
  return {
    kind: "failed",
    turnId: job.turnId,
    userMessage:
      "Herald could not bring this conversation's files to the worker that took this message (the gateway's workspace store did not answer). Send the message again in a moment.",
    error: `workspace pull failed: ${describeError(err)}`,
    retryable: true,
    code: "state_error",
    messages: job.resume ? [] : [{ role: "user", content: job.input.text }],
  };
}
