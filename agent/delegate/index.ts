/**
 * Delegation: `delegate_task` hands tasks to child turns that run on the job queue like any turn (their
 * rows in `state.db`, once per task however often the parent runs), and `/background`, `/tasks`,
 * `/stop <id>` run a prompt in a session of its own.
 */
export {
  type BackgroundOptions,
  type BackgroundTask,
  backgroundCommands,
  backgroundTasks,
} from "./background.js";
export {
  createDelegation,
  type Delegation,
  type DelegationConfig,
  type DelegationGateway,
  type DelegationState,
} from "./gateway.js";
export {
  DELEGATE_TOOLSET,
  type DelegationOptions,
  DelegationService,
  type DelegationSettings,
  groupIdOf,
} from "./service.js";
export {
  type DelegateChild,
  type DelegateGroup,
  type DelegateParent,
  type DelegateStateApi,
  type DelegateTask,
  delegateStateMethods,
} from "./state.js";
export { delegateTool, formatResults, progressLine } from "./tool.js";
