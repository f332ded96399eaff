/** Which shell commands need a person's approval: a table of rules over a shell-aware split. */
export { classifyCommand, patternKey } from "./classify.js";
export { approvalCommands } from "./commands.js";
export {
  type Approvals,
  type ApprovalsGateway,
  type ApprovalsSettings,
  createApprovals,
} from "./gateway.js";
export {
  type ApprovalAsk,
  type ApprovalRequest,
  ApprovalStore,
  type ApprovalsStateApi,
  answerText,
  approvalButtonData,
  approvalButtons,
  approvalPrompt,
  type PendingApproval,
  resumeOf,
  ruleIdsOf,
  shortRequestId,
} from "./requests.js";
export { RULES, UNPARSEABLE_RULE } from "./rules.js";
export { classifyWrite, STDIN_CODE_RULE, type StdinReader, stdinReaders } from "./stdin-code.js";
export type { CommandClassification, CommandView, DangerRule, MatchedRule, RuleContext } from "./types.js";
