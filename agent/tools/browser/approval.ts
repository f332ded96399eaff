/**
 * What a browser action that `browser.approve` names does under `exec.dangerous_commands`: `manual`
 * holds it for the user's approval (the answer resumes the turn and runs exactly that call), `deny`
 * refuses it. An approval matches the action's description exactly ("submit the form to … on …"),
 * and "always" grants the rule (`browser-submit`, `browser-download`) for the rest of the session.
 */
import type { ApprovalAsk } from "../../exec/approvals/index.js";
import type { ToolContext, ToolOutput } from "../../types.js";

/** Undefined: go ahead (approved). Otherwise the call's output: held for approval, or refused. */
export async function gateAction(
  mode: "manual" | "deny",
  ctx: ToolContext,
  ask: ApprovalAsk,
): Promise<ToolOutput | undefined> {
  const approvals = ctx.state.approvals;
  const ruleIds = [ask.ruleId];
  if (mode === "manual" && approvals) {
    if (await approvals.check(ctx.origin.sessionKey, ask.command, ruleIds)) {
      ctx.logger.info({ rule: ask.ruleId }, "browser action runs with the user's approval");
      return undefined;
    }
    ctx.logger.info({ rule: ask.ruleId }, "browser action waits for approval");
    return {
      content: `not done yet: ${ask.ruleDescription} needs the user's approval. They were asked; their answer resumes this.`,
      approval: ask,
    };
  }
  ctx.logger.warn({ rule: ask.ruleId }, "browser action refused");
  return {
    content: `error: refused: ${ask.ruleDescription} needs the owner's approval, which this gateway does not grant (exec.dangerous_commands: deny). Tell the user what you wanted to do.`,
    isError: true,
  };
}
