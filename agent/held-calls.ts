/**
 * Calls held for a person's approval. A step with a held call ends the turn: the request is recorded
 * with the call and the step (the assistant message and every call's result so far), and the chat gets
 * the prompt. The answer starts a turn that resumes there: its first step is that same step with the
 * held call's real result (Herald runs the call itself on approval), and the model carries on. The
 * held call is the loop's own: this file adds the `approvals` member to the `StateClient` and the
 * `approval` field to a tool's output, with the types of the approvals library.
 */

import { z } from "zod";
import type { TurnJob, TurnResume } from "../core/turn.js";
import { resumedStep } from "../core/turn-steps.js";
import type { ChatMessage, OutboundButton, ToolCall } from "../core/types.js";
import {
  type ApprovalAsk,
  type ApprovalsStateApi,
  approvalButtons,
  approvalPrompt,
} from "./exec/approvals/index.js";
import {
  chatMessageSchema,
  chatRefSchema,
  type MethodsOf,
  type StateMethodSchemas,
  toolCallSchema,
} from "./state-methods.js";
import type { ToolOutput } from "./types.js";

declare module "./types.js" {
  interface StateClient {
    /** Approval requests of held calls (the `terminal` tool's dangerous commands). */
    approvals?: ApprovalsStateApi | undefined;
  }
  interface ToolOutput {
    /**
     * The call did not run: it needs a person's approval first (a dangerous command). The loop records
     * the request with this call and the rest of its step, and ends the turn with the prompt; the answer
     * starts a turn that resumes here (`TurnJob.resume`), where an approved call is run by Herald itself
     * and its output becomes this call's result. `content` is what a `delegate_task` child's model reads.
     */
    approval?: ApprovalAsk | undefined;
  }
}

/** The argument schemas of the `approvals` member. */
export const approvalStateMethods = {
  "approvals.check": z.tuple([z.string(), z.string(), z.array(z.string()).max(64)]),
  "approvals.request": z.tuple([
    z.strictObject({
      sessionKey: z.string(),
      sessionId: z.string(),
      chat: chatRefSchema,
      userId: z.string(),
      command: z.string(),
      ruleId: z.string(),
      ruleDescription: z.string(),
      ruleIds: z.array(z.string()).max(64).optional(),
      target: z.string().optional(),
      call: toolCallSchema.optional(),
      step: z.array(chatMessageSchema).max(200).optional(),
    }),
  ]),
} satisfies StateMethodSchemas<MethodsOf<"approvals">>;

/** The held call's result while it waits (kept with the request; the answer replaces it). */
const WAITING = "waiting for the user's approval";
const ALSO_HELD =
  "not run: another call of this step waits for the user's approval; make this call again once they have answered.";

/** What the turn keeps of a held step, and what it asks the chat. */
export interface HeldStep {
  /** Messages the turn keeps for this step: none (they wait with the request), or a child's own step. */
  kept: ChatMessage[];
  prompt: string;
  buttons: OutboundButton[][];
}

/**
 * Records the request for the first held call of a step (`outputs[held].approval`) and builds the
 * prompt. Other held calls of the same step are told to ask again later (one request per session). A
 * `delegate_task` child's step is not the session's: its request has no step, and the child keeps it.
 * @throws what `approvals.request` throws (the turn fails; nothing ran)
 */
export async function holdStep(
  job: TurnJob,
  approvals: ApprovalsStateApi,
  assistant: ChatMessage,
  calls: readonly ToolCall[],
  outputs: readonly ToolOutput[],
  held: number,
): Promise<HeldStep> {
  const ask = outputs[held]?.approval;
  const call = calls[held];
  if (!ask || !call) throw new Error("holdStep needs the index of a held call");
  const result = (content: (o: ToolOutput, i: number) => string): ChatMessage[] =>
    outputs.map((o, i) => ({ role: "tool", content: content(o, i), tool_call_id: calls[i]?.id ?? "" }));
  const child = job.delegation !== undefined;
  const step = [assistant, ...result((o, i) => (i === held ? WAITING : o.approval ? ALSO_HELD : o.content))];
  const { origin } = job;
  const { id, expiresAt } = await approvals.request({
    sessionKey: origin.sessionKey,
    sessionId: origin.sessionId,
    chat: origin.chat,
    userId: origin.userId,
    ...ask,
    call,
    ...(child ? {} : { step }),
  });
  const prompt = approvalPrompt({ ...ask, createdAt: Date.now(), expiresAt });
  const kept = child
    ? [assistant, ...result((o, i) => (o.approval && i !== held ? ALSO_HELD : o.content))]
    : [];
  return { kept, prompt, buttons: approvalButtons(id) };
}

/**
 * The first step of a resumed turn: the held call run (approved) or refused (denied, lapsed), in its
 * step. `run` runs one call as the loop does (progress, hooks). An approved call that asks again (its
 * one-time approval was used by an earlier attempt of this turn, cut short by a restart) is not run.
 */
export async function resumeStep(
  resume: TurnResume,
  run: (call: ToolCall) => Promise<ToolOutput>,
): Promise<ChatMessage[]> {
  let content: string;
  if (resume.answer === "approved") {
    const output = await run(resume.call);
    content = output.approval
      ? "not run: its approval was already used by an earlier attempt of this turn that did not finish (Herald restarted). Check whether it took effect; ask again if it is still needed."
      : output.content;
  } else if (resume.answer === "denied") {
    content = `not run: ${resume.by} denied it. Do not run it another way; say what you will do instead.`;
  } else {
    content =
      "not run: nobody answered the approval request in time, so it lapsed. Ask again if it is still needed.";
  }
  return resumedStep(resume, content);
}
