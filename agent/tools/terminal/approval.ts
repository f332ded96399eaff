/**
 * What the terminal tools do with a call the approval rules flag: refuse it (`deny`, or no approvals
 * reachable), let it through (approved once for exactly this text, or every rule it matched granted
 * for the session), or hold it for the user's answer (`ToolOutput.approval`: the agent loop asks).
 */

import { type ApprovalAsk, ruleIdsOf } from "../../exec/approvals/index.js";
import type { CommandClassification } from "../../exec/approvals/types.js";
import type { ToolContext, ToolOutput } from "../../types.js";

/** The ask for a flagged verdict on `command`. */
export function askFor(
  command: string,
  verdict: Extract<CommandClassification, { dangerous: true }>,
  target?: string,
): ApprovalAsk {
  return {
    command,
    ruleId: verdict.rule.id,
    ruleDescription: verdict.rules.map((r) => r.description).join("; "),
    ruleIds: verdict.rules.map((r) => r.id),
    ...(target ? { target } : {}),
  };
}

/** Undefined: run it. Otherwise the call's output: held for approval, or refused. */
export async function gateDangerous(
  mode: "manual" | "deny",
  ask: ApprovalAsk,
  ctx: ToolContext,
): Promise<ToolOutput | undefined> {
  const approvals = ctx.state.approvals;
  const ruleIds = ruleIdsOf(ask);
  const rules = `${ruleIds.length === 1 ? "rule" : "rules"} ${ruleIds.join(", ")}`;
  if (mode === "manual" && approvals) {
    if (await approvals.check(ctx.origin.sessionKey, ask.command, ruleIds)) {
      ctx.logger.info({ rules: ruleIds }, "dangerous command runs with the user's approval");
      return undefined;
    }
    ctx.logger.info({ rules: ruleIds }, "dangerous command waits for approval");
    return {
      content: `not run yet: ${ask.ruleDescription} (${rules}) needs the user's approval. They were asked; their answer resumes this.`,
      approval: ask,
    };
  }
  ctx.logger.warn({ rules: ruleIds }, "dangerous command refused");
  return {
    content: `error: refused without running it: ${ask.ruleDescription} (${rules}). Commands like this need the owner's approval, which this gateway does not grant (exec.dangerous_commands: deny). Tell the user what you wanted to run and why, or find a way that stays inside the workspace and can be read before it runs.`,
    isError: true,
  };
}
